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

  describe '.cpu_bound' do
    # floor(share / 100 * cores * runinterval / CPU-s per run)
    {
      { cores: 2, runinterval: 1800 } => 1080,
      { cores: 2, runinterval: 600 } => 360,
      { cores: 2, runinterval: 1800, share_percent: 50 } => 720,
      { cores: 4, runinterval: 1800, share_percent: 100, cpu_seconds: 10 } => 720,
      { cores: 1, runinterval: 60, share_percent: 1, cpu_seconds: 2.5 } => 0,
      { cores: 2, runinterval: 1800, cpu_seconds: 0.1 } => 27_000,
    }.each do |args, expected|
      it "gives #{expected} for #{args}" do
        expect(described_class.cpu_bound(**args)).to eq(expected)
      end
    end

    it 'refuses a run that costs nothing' do
      expect { described_class.cpu_bound(cores: 2, runinterval: 1800, cpu_seconds: 0) }
        .to raise_error(ArgumentError, %r{cpu_seconds_per_run must be above 0})
    end
  end

  describe '.fleet' do
    it 'takes the CPU bound when it is the smaller' do
      expect(described_class.fleet(total_bytes: 24 * gib, cores: 2, run_mode: 'timer', runinterval: 1800))
        .to include('clones' => 1080, 'bound' => 'cpu', 'memory' => 1126, 'cpu' => 1080)
    end

    it 'takes the memory bound when it is the smaller' do
      expect(described_class.fleet(total_bytes: 24 * gib, cores: 2, run_mode: 'daemon', runinterval: 1800))
        .to include('clones' => 225, 'bound' => 'memory', 'memory' => 225, 'cpu' => 1080)
    end

    it 'costs an apply clone the memory of a timer clone and bounds its runs by CPU too' do
      expect(described_class.fleet(total_bytes: 24 * gib, cores: 2, run_mode: 'apply', runinterval: 600))
        .to include('clones' => 360, 'bound' => 'cpu', 'memory' => 1126, 'cpu' => 360)
    end

    it 'bounds manual clones, which run only when asked, by memory alone' do
      expect(described_class.fleet(total_bytes: 24 * gib, cores: 2, run_mode: 'manual', runinterval: 60))
        .to include('clones' => 1126, 'bound' => 'memory', 'memory' => 1126, 'cpu' => nil)
    end

    it 'says how the bound was reckoned' do
      expect(described_class.fleet(total_bytes: 24 * gib, cores: 2, run_mode: 'timer', runinterval: 600)['reason'])
        .to eq('one run every 600 s a clone at 2.5 CPU-s a run within 75 % of 2 cores')
      expect(described_class.fleet(total_bytes: 24 * gib, cores: 8, run_mode: 'timer', runinterval: 1800)['reason'])
        .to eq('total memory minus 2048 MiB, divided by 20 MiB a clone in timer mode')
    end

    it 'names memory on a tie' do
      # 1126 runs of 2.5 CPU-s in 75 % of 2 cores: an interval of 1876.67 s, so 1877 s holds 1126.
      expect(described_class.fleet(total_bytes: 24 * gib, cores: 2, run_mode: 'timer', runinterval: 1877)['bound'])
        .to eq('memory')
    end
  end
end
