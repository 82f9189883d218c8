# frozen_string_literal: true

require 'spec_helper'
require 'facter'

describe 'the clone_army fact' do
  gib = 1024 * 1024 * 1024

  before(:each) do
    Facter.clear
    allow(Facter).to receive(:value).and_call_original
    allow(Facter).to receive(:value).with(:memory).and_return('system' => { 'total_bytes' => 24 * gib })
    allow(Facter).to receive(:value).with(:kernel).and_return('Linux')
    allow(Facter).to receive(:value).with(:processors).and_return('count' => 2)
    # No helper on this machine's default path: the fact stays at capacity.
    allow(PuppetX::CloneArmy::Helper).to receive(:resolve_path).and_return('/nonexistent/clone-army')
    load File.expand_path('../../../lib/facter/clone_army.rb', __dir__)
  end

  after(:each) { Facter.clear }

  it 'gives the capacity of each run mode, the smaller of memory and CPU, and which bound it is' do
    # memory: (24 GiB - 2 GiB) / 100 MiB = 225 daemon, / 20 MiB = 1126 timer clones;
    # CPU: 75 % of 2 cores over 1800 s at 2.5 CPU-s a run = 1080 runs an interval.
    expect(Facter.fact(:clone_army).value).to eq(
      'capacity' => { 'daemon' => 225, 'timer' => 1080 },
      'capacity_bound' => { 'daemon' => 'memory', 'timer' => 'cpu' },
    )
  end

  context 'without a processor count' do
    before(:each) { allow(Facter).to receive(:value).with(:processors).and_return(nil) }

    it 'takes one core, as the class does: 75 % of 1 core over 1800 s at 2.5 CPU-s bounds timer clones at 540' do
      expect(Facter.fact(:clone_army).value).to eq('capacity' => { 'daemon' => 225, 'timer' => 540 },
                                                   'capacity_bound' => { 'daemon' => 'memory', 'timer' => 'cpu' })
    end
  end

  context 'when the helper is installed but fails' do
    include_context 'with a helper binary'

    it 'resolves with an error string instead of failing' do
      allow(PuppetX::CloneArmy::Helper).to receive(:resolve_path).and_return(helper_path)
      expect_helper(['base', 'list', '--format', 'json'], 'captured_systemd_unreachable.json', 1)
      value = Facter.fact(:clone_army).value
      expect(value['capacity']).to eq('daemon' => 225, 'timer' => 1080)
      expect(value['error']).to match(%r{clone-army base list --format json failed \[systemd\]})
    end
  end
end
