# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/capacity'

describe PuppetX::CloneArmy::Capacity do
  gib = 1024 * 1024 * 1024
  mib = 1024 * 1024

  describe '.clones_for' do
    # floor((total - 2 GiB) / cost), never below 0.
    {
      [24 * gib, 'daemon'] => 225, # 22528 MiB / 100 MiB
      [24 * gib, 'timer'] => 1126, # 22528 MiB / 20 MiB
      [(2 * gib) + (100 * mib), 'daemon'] => 1,
      [(2 * gib) + (199 * mib), 'daemon'] => 1,
      [(2 * gib) + (200 * mib), 'daemon'] => 2,
      [(2 * gib) + (19 * mib), 'timer'] => 0,
      [(2 * gib) + (20 * mib), 'timer'] => 1,
      [(2 * gib) + (39 * mib), 'timer'] => 1,
      [(2 * gib) + (40 * mib), 'timer'] => 2,
      [2 * gib, 'daemon'] => 0,
      [1 * gib, 'timer'] => 0,
      [0, 'daemon'] => 0,
    }.each do |(total, mode), expected|
      it "gives #{expected} #{mode} clones for #{total} bytes" do
        expect(described_class.clones_for(total, mode)).to eq(expected)
      end
    end

    it 'accepts the mode as a symbol' do
      expect(described_class.clones_for(24 * gib, :daemon)).to eq(225)
    end

    it 'refuses an unknown run mode, naming the known ones' do
      expect { described_class.clones_for(24 * gib, 'cron') }.to raise_error(ArgumentError, %r{"cron".*daemon, timer})
    end
  end

  describe '.for_memory' do
    it 'gives the capacity of every run mode' do
      expect(described_class.for_memory(24 * gib)).to eq('daemon' => 225, 'timer' => 1126)
    end
  end
end
