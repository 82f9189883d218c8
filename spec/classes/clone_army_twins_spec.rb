# frozen_string_literal: true

require 'spec_helper'

# A fleet of twins: the import, the dealing of the imported nodes to the
# clones, their certnames, and the refusals that keep twins harmless.
describe 'clone_army' do
  let(:node) { 'loadhost.example.com' }
  let(:imported_from) { { 'facts_dir' => '/srv/estate' } }
  let(:nodes) do
    {
      'web01.example.com' => { 'os_family' => 'Debian', 'role' => 'web', 'environment' => 'production' },
      'web02.example.com' => { 'os_family' => 'Debian', 'role' => 'web', 'environment' => 'production' },
      'db01.example.com' => { 'os_family' => 'Debian', 'role' => 'db', 'environment' => 'production' },
      'win01.example.com' => { 'os_family' => 'windows', 'role' => 'ad' },
    }
  end
  let(:fleet_fact) do
    { 'capacity' => { 'daemon' => 225, 'timer' => 1080 }, 'helper' => '/usr/local/sbin/clone-army',
      'bases' => ['debian-12'],
      'clones' => { 'names' => ['clone1', 'clone2', 'clone3', 'clone4'], 'total' => 4, 'running' => 4, 'stopped' => 0 },
      'twins' => { 'total' => nodes.size, 'nodes' => nodes, 'imported_from' => imported_from } }
  end
  let(:facts) do
    {
      kernel: 'Linux',
      processors: { 'count' => 2 },
      memory: { 'system' => { 'total_bytes' => 24 * 1024 * 1024 * 1024 } },
      os: { 'name' => 'Debian', 'family' => 'Debian', 'hardware' => 'x86_64', 'architecture' => 'amd64',
            'release' => { 'major' => '12', 'full' => '12' }, 'distro' => { 'codename' => 'bookworm' } },
      networking: { 'fqdn' => 'loadhost.example.com', 'hostname' => 'loadhost', 'domain' => 'example.com' },
      clone_army: fleet_fact,
    }
  end
  let(:twins) { { 'facts_dir' => '/srv/estate', 'exports' => 'isolated' } }
  let(:params) { { server: 'puppet-test.example.com', num_clones: 4, agent_noop: true, twins: twins } }

  context 'with the nodes imported from the source asked for' do
    it { is_expected.to compile.with_all_deps }

    it 'imports from the source, before the clones' do
      is_expected.to contain_clone_army_twins('clone_army').with(source: { 'facts_dir' => '/srv/estate' })
      is_expected.to contain_clone_army_clone('clone1').that_requires('Clone_army_twins[clone_army]')
    end

    it 'deals the nodes of the base family in name order, again from the first, each twin named after its node' do
      is_expected.to contain_clone_army_clone('clone1').with(twin: 'db01.example.com',
                                                             certname: 'clone1.db01.loadhost.example.com')
      is_expected.to contain_clone_army_clone('clone2').with(twin: 'web01.example.com',
                                                             certname: 'clone2.web01.loadhost.example.com')
      is_expected.to contain_clone_army_clone('clone3').with(twin: 'web02.example.com')
      is_expected.to contain_clone_army_clone('clone4').with(twin: 'db01.example.com',
                                                             certname: 'clone4.db01.loadhost.example.com')
    end

    it 'names the nodes of another OS family, which get no twin' do
      is_expected.to compile
      expect(catalogue.resources.map { |r| r[:twin] }).not_to include('win01.example.com')
    end

    context 'with certnames => node_prefix' do
      let(:twins) { super().merge('certnames' => 'node_prefix') }

      it 'puts the node label first, so that node /^web\d+/ matches' do
        is_expected.to contain_clone_army_clone('clone2').with(certname: 'web01-clone2.loadhost.example.com')
      end
    end

    context 'with assign => mix' do
      let(:params) { super().merge(num_clones: 3) }
      let(:twins) { super().merge('assign' => 'mix') }

      it 'holds the roles in the estate\'s proportions in the first clones' do
        roles = (1..3).map { |i| nodes.dig(catalogue.resource('Clone_army_clone', "clone#{i}")[:twin], 'role') }
        expect(roles.tally).to eq('web' => 2, 'db' => 1)
      end
    end
  end

  context 'when the nodes are not imported yet (or from another source)' do
    let(:imported_from) { { 'facts_dir' => '/srv/older-estate' } }

    it 'imports them and leaves the clones as they are, none declared and none removed' do
      is_expected.to compile.with_all_deps
      is_expected.to contain_clone_army_twins('clone_army')
      expect(catalogue.resources.select { |r| r.type == 'Clone_army_clone' }).to eq([])
    end
  end

  context 'from a PuppetDB' do
    let(:imported_from) { { 'puppetdb' => 'https://puppetdb.example.com:8081', 'query' => 'inventory[certname] {}' } }
    let(:twins) do
      { 'puppetdb' => 'https://puppetdb.example.com:8081', 'query' => 'inventory[certname] {}', 'exports' => 'shared',
        'ca_cert' => '/etc/pki/ca.pem' }
    end

    it 'imports with the query and the TLS files given' do
      is_expected.to contain_clone_army_twins('clone_army').with(source: imported_from, ca_cert: '/etc/pki/ca.pem')
      is_expected.to contain_clone_army_clone('clone1').with(twin: 'db01.example.com')
    end
  end

  context 'without twins' do
    let(:params) { { server: 'puppet-test.example.com', num_clones: 2 } }

    it 'makes plain clones, twins before made plain again' do
      is_expected.not_to contain_clone_army_twins('clone_army')
      is_expected.to contain_clone_army_clone('clone1').with(twin: 'absent', certname: 'clone1.loadhost.example.com')
    end
  end

  context 'when refused' do
    {
      'twins without agent_noop' => [{ agent_noop: false }, %r{twins run their nodes' own catalogs, so they run in noop}],
      'twins from both a directory and a PuppetDB' => [
        { twins: { 'facts_dir' => '/srv/estate', 'puppetdb' => 'db', 'query' => 'q', 'exports' => 'shared' } },
        %r{give one of the two},
      ],
      'a PuppetDB without a query' => [{ twins: { 'puppetdb' => 'db', 'exports' => 'shared' } }, %r{give one of the two}],
      'TLS files for a directory' => [
        { twins: { 'facts_dir' => '/srv/estate', 'exports' => 'shared', 'client_key' => '/k.pem' } },
        %r{client_key are for `puppetdb` only},
      ],
      'twins in apply mode' => [
        { run_mode: 'apply', apply_source: '/srv/apply' }, %r{twins need a Puppet Server}
      ],
      'isolated exports from the server under test\'s own PuppetDB' => [
        { twins: { 'puppetdb' => 'https://PUPPET-test.example.com:8081', 'query' => 'q', 'exports' => 'isolated' } },
        %r{is the host of the PuppetDB the nodes come from},
      ],
      'twins without a word on exports' => [{ twins: { 'facts_dir' => '/srv/estate' } }, %r{exports}],
    }.each do |what, (given, message)|
      context "with #{what}" do
        let(:params) { super().merge(given) }

        it { is_expected.to compile.and_raise_error(message) }
      end
    end

    context 'with noop waived in so many words' do
      let(:params) { super().merge(agent_noop: false, twins: twins.merge('noop' => 'waived')) }

      it { is_expected.to contain_clone_army_clone('clone1').with(agent_noop: false, twin: 'db01.example.com') }
    end

    context 'when no imported node is of the base\'s OS family' do
      let(:nodes) { { 'win01.example.com' => { 'os_family' => 'windows' } } }

      it { is_expected.to compile.and_raise_error(%r{none of the 1 imported nodes is of the base's OS family \(Debian\)}) }
    end
  end
end
