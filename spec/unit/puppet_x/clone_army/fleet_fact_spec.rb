# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/fleet_fact'

describe PuppetX::CloneArmy::FleetFact do
  gib = 1024 * 1024 * 1024

  describe '.value' do
    context 'when the helper is installed' do
      include_context 'with a helper binary'

      it 'adds the bases and the clones counted by state, from one base list and one clone list' do
        expect_helper(['base', 'list', '--format', 'json'], 'base_list.json')
        expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
        expect_helper(['twin', 'list'], 'generated/twin_list_empty.json')
        expect(described_class.value(total_bytes: 24 * gib, cores: 2, helper_path: helper_path)).to eq(
          'capacity' => { 'daemon' => 225, 'timer' => 1080 },
          'capacity_bound' => { 'daemon' => 'memory', 'timer' => 'cpu' },
          'helper' => helper_path,
          'bases' => ['debian-12'],
          'clones' => {
            'names' => ['clone1', 'clone2'],
            'certnames' => { 'clone1' => 'clone1.loadhost.example.com', 'clone2' => 'clone2.loadhost.example.com' },
            'total' => 2, 'running' => 1, 'stopped' => 1
          },
        )
      end

      it 'reports an empty fleet as such' do
        expect_helper(['base', 'list', '--format', 'json'], 'captured_base_list_empty.json')
        expect_helper(['clone', 'list', '--format', 'json'], 'captured_clone_list_empty.json')
        expect_helper(['twin', 'list'], 'generated/twin_list_empty.json')
        fact = described_class.value(total_bytes: 24 * gib, cores: 2, helper_path: helper_path)
        expect(fact).not_to include('twins')
        expect(fact['bases']).to eq([])
        expect(fact['clones']).to eq('names' => [], 'certnames' => {}, 'total' => 0, 'running' => 0, 'stopped' => 0)
      end

      it 'adds the imported nodes twins are made from, from one twin list' do
        expect_helper(['base', 'list', '--format', 'json'], 'base_list.json')
        expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
        expect_helper(['twin', 'list'], 'generated/twin_list.json')
        fact = described_class.value(total_bytes: 24 * gib, cores: 2, helper_path: helper_path)
        expect(fact['twins']['total']).to eq(3)
        expect(fact['twins']['nodes'].keys).to contain_exactly('web01.example.com', 'web02.example.com', 'db01.example.com')
        expect(fact['twins']['imported_from']).to eq('facts_dir' => '/srv/estate')
      end

      it 'puts a helper failure into `error` instead of failing, and lists nothing' do
        expect_helper(['base', 'list', '--format', 'json'], 'base_list.json')
        expect_helper(['clone', 'list', '--format', 'json'], 'error_systemd.json', 1)
        fact = described_class.value(total_bytes: 24 * gib, cores: 2, helper_path: helper_path)
        expect(fact['error']).to match(%r{clone-army clone list --format json failed \[systemd\]})
        expect(fact['capacity']).to eq('daemon' => 225, 'timer' => 1080)
        expect(fact).not_to include('bases', 'clones')
      end

      it 'puts a malformed answer into `error`' do
        expect_helper(['base', 'list', '--format', 'json'], 'malformed.txt', 101)
        fact = described_class.value(total_bytes: 24 * gib, cores: 2, helper_path: helper_path)
        expect(fact['error']).to match(%r{malformed answer})
        expect(fact).not_to include('bases', 'clones')
      end
    end

    context 'when the helper is not installed (the very first run)' do
      it 'still gives the capacity, and nothing else' do
        expect(PuppetX::CloneArmy::Runner).not_to receive(:run)
        fact = described_class.value(total_bytes: 24 * gib, cores: 2, helper_path: '/nonexistent/clone-army')
        expect(fact).to eq('capacity' => { 'daemon' => 225, 'timer' => 1080 },
                           'capacity_bound' => { 'daemon' => 'memory', 'timer' => 'cpu' })
      end
    end

    context 'when the memory is unknown' do
      it 'leaves the capacity out' do
        expect(described_class.value(total_bytes: nil, helper_path: '/nonexistent/clone-army')).to eq({})
      end
    end
  end
end
