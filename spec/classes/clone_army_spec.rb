# frozen_string_literal: true

require 'spec_helper'

GIB = 1024 * 1024 * 1024
MIB = 1024 * 1024

describe 'clone_army' do
  let(:node) { 'loadhost.example.com' }

  PlatformFacts.compiled_os.each do |os, os_facts|
    context "on #{os}" do
      let(:facts) do
        os_facts.merge(memory: { 'system' => { 'total_bytes' => 24 * GIB } })
      end
      let(:base) do
        "#{os_facts[:os]['name']}-#{os_facts[:os]['release']['major']}".downcase.gsub(%r{[^a-z0-9-]}, '-')
      end

      context 'with server and num_clones' do
        let(:params) { { server: 'puppet.example.com', num_clones: 2 } }

        it { is_expected.to compile.with_all_deps }

        it 'installs the helper from the module' do
          is_expected.to contain_file('/usr/local/sbin/clone-army').with(
            ensure: 'file', source: 'puppet:///modules/clone_army/clone-army',
            owner: 'root', group: 'root', mode: '0755'
          )
        end

        it 'declares a base named after the host OS' do
          expect(base).to match(%r{\A[a-z]+-[0-9][0-9-]*\z})
          is_expected.to contain_clone_army_base(base).with(ensure: 'present', helper: '/usr/local/sbin/clone-army')
        end

        # Only Debian and Ubuntu ship a puppet-agent package of their own.
        it 'builds the base from an agent source the host OS has' do
          source = os_facts[:os]['family'] == 'Debian' ? 'distro' : 'openvox'
          is_expected.to contain_clone_army_base(base).with_puppet_source(source)
        end

        it 'declares clone1..2 pointed at the server, with certnames under the host certname' do
          [1, 2].each do |index|
            is_expected.to contain_clone_army_clone("clone#{index}").with(
              ensure: 'present',
              base: base,
              server: 'puppet.example.com',
              certname: "clone#{index}.loadhost.example.com",
              helper: '/usr/local/sbin/clone-army',
              # Real runs unless asked: a noop fleet is a choice.
              agent_noop: false,
            )
          end
          is_expected.to have_clone_army_clone_resource_count(2)
          # One resource does the clones' batched starts, after all of them (its autorequire).
          is_expected.to contain_clone_army_fleet('clone_army')
        end

        it 'installs the helper before the fleet' do
          is_expected.to contain_class('clone_army::install').that_comes_before('Class[clone_army::fleet]')
        end
      end
    end
  end

  context 'on Ubuntu 22.04' do
    let(:facts) { PlatformFacts.written_facts['ubuntu-22.04-x86_64'].merge(memory: { 'system' => { 'total_bytes' => 8 * GIB } }) }
    let(:params) { { server: 'puppet.example.com', num_clones: 1 } }

    it 'names the default base with the dot turned into a dash' do
      is_expected.to contain_clone_army_base('ubuntu-22-04')
      is_expected.to contain_clone_army_clone('clone1').with_base('ubuntu-22-04')
    end
  end

  context 'on Debian 12 (facts of the test machine)' do
    let(:facts) do
      PlatformFacts.written_facts['debian-12-x86_64'].merge(memory: { 'system' => { 'total_bytes' => 24 * GIB } })
    end

    describe 'server' do
      context 'when not given and no Puppet Server compiled the catalog (puppet apply, bolt apply)' do
        it { is_expected.to compile.and_raise_error(%r{not compiled by a Puppet Server.*pass `server`}m) }
      end

      context 'when not given and a Puppet Server compiled the catalog' do
        # rspec-puppet's servername is the fqdn of the node it compiles for,
        # so here the load host and the server share a name; without
        # server facts the same catalog fails (above).
        let(:node) { 'compiler.example.com' }
        let(:params) { { num_clones: 1 } }

        around(:each) do |example|
          RSpec.configuration.trusted_server_facts = true
          example.run
        ensure
          RSpec.configuration.trusted_server_facts = false
        end

        it { is_expected.to contain_clone_army_clone('clone1').with_server('compiler.example.com') }

        context 'and server is given as well' do
          let(:params) { { num_clones: 1, server: 'puppet.example.com' } }

          it { is_expected.to contain_clone_army_clone('clone1').with_server('puppet.example.com') }
        end

        # The host's agent reaches the server as `puppet`, which the server's
        # certificate holds where its fqdn may not be.
        context "and the host's agent reaches its server by another name" do
          let(:facts) { super().merge(clone_army_agent_server: 'puppet') }

          it { is_expected.to contain_clone_army_clone('clone1').with_server('puppet') }

          context 'that is not a host name' do
            let(:facts) { super().merge(clone_army_agent_server: 'not a host') }

            it { is_expected.to contain_clone_army_clone('clone1').with_server('compiler.example.com') }
          end

          context 'on a port of its own' do
            let(:facts) { super().merge(clone_army_agent_server_port: 8141) }

            it { is_expected.to contain_clone_army_clone('clone1').with(server: 'puppet', server_port: 8141) }

            context 'and server_port is given' do
              let(:params) { { num_clones: 1, server_port: 8142 } }

              it { is_expected.to contain_clone_army_clone('clone1').with(server: 'puppet', server_port: 8142) }
            end

            context 'and server is given as that same name' do
              let(:params) { { num_clones: 1, server: 'puppet' } }

              it { is_expected.to contain_clone_army_clone('clone1').with(server: 'puppet', server_port: 8141) }
            end

            context 'and server is given, whose port that is not' do
              let(:params) { { num_clones: 1, server: 'puppet.example.com' } }

              it { is_expected.to contain_clone_army_clone('clone1').with(server: 'puppet.example.com', server_port: nil) }
            end
          end
        end
      end

      context 'with server_port' do
        let(:params) { { num_clones: 2, server: 'puppet.example.com', server_port: 8141 } }

        it 'gives every clone that port with the server' do
          ['clone1', 'clone2'].each do |clone|
            is_expected.to contain_clone_army_clone(clone).with(server: 'puppet.example.com', server_port: 8141)
          end
        end
      end

      context 'without server_port' do
        let(:params) { { num_clones: 1, server: 'puppet.example.com' } }

        it 'leaves the clones at Puppet\'s default port, and a port they have alone' do
          is_expected.to contain_clone_army_clone('clone1').with(server_port: nil)
        end
      end

      [0, 65_536, '8141'].each do |bad|
        context "with server_port #{bad.inspect}" do
          let(:params) { { num_clones: 1, server: 'puppet.example.com', server_port: bad } }

          it { is_expected.to compile.and_raise_error(%r{server_port}) }
        end
      end

      context 'when given as master, the deprecated word' do
        let(:params) { { num_clones: 1, master: 'old.example.com' } }

        it 'is taken as server, with a warning' do
          logs = []
          collector = Puppet::Test::LogCollector.new(logs)
          Puppet::Util::Log.newdestination(collector)
          begin
            is_expected.to contain_clone_army_clone('clone1').with_server('old.example.com')
          ensure
            Puppet::Util::Log.close(collector)
          end
          expect(logs.map(&:message)).to include(a_string_including('master is deprecated, give server instead'))
        end

        context 'beside a server that differs' do
          let(:params) { { num_clones: 1, master: 'old.example.com', server: 'new.example.com' } }

          it { is_expected.to compile.and_raise_error(%r{server => 'new.example.com' and master => 'old.example.com' disagree}) }
        end

        context 'beside the same server' do
          let(:params) { { num_clones: 1, master: 'same.example.com', server: 'same.example.com' } }

          it { is_expected.to contain_clone_army_clone('clone1').with_server('same.example.com') }
        end
      end

      ['puppet example.com', 'puppet.example.com.', '-puppet', 'a' * 254].each do |bad|
        context "when #{bad[0, 20].inspect}" do
          let(:params) { { server: bad } }

          it { is_expected.to compile.and_raise_error(%r{parameter 'server' expects}) }
        end
      end
    end

    describe 'num_clones' do
      let(:params) { { server: 'puppet.example.com' } }

      # Daemon mode: (total - 2 GiB) / 100 MiB, rounded down, never below 0.
      {
        24 * GIB => 225,
        (2 * GIB) + (100 * MIB) => 1,
        (2 * GIB) + (199 * MIB) => 1,
        (2 * GIB) + (200 * MIB) => 2,
        2 * GIB => 0,
        1 * GIB => 0,
      }.each do |total, expected|
        context "with #{total} bytes of RAM" do
          let(:facts) { super().merge(memory: { 'system' => { 'total_bytes' => total } }) }

          it "declares #{expected} clones" do
            is_expected.to have_clone_army_clone_resource_count(expected)
            is_expected.to contain_clone_army_clone("clone#{expected}") if expected.positive?
            is_expected.not_to contain_clone_army_clone("clone#{expected + 1}")
          end
        end
      end

      context 'beyond the capacity' do
        let(:facts) { super().merge(memory: { 'system' => { 'total_bytes' => (2 * GIB) + (300 * MIB) } }) }
        let(:params) { { server: 'puppet.example.com', num_clones: 4 } }

        it 'fails, naming num_clones, the capacity, its bound and force_num_clones' do
          is_expected.to compile.and_raise_error(
            %r{num_clones => 4 is more than this host holds: its capacity is 3 clones, bound by memory.*force_num_clones => true}m,
          )
        end

        context 'with force_num_clones' do
          let(:params) { { server: 'puppet.example.com', num_clones: 4, force_num_clones: true } }

          it { is_expected.to have_clone_army_clone_resource_count(4) }
        end

        context 'and num_clones at the capacity' do
          let(:params) { { server: 'puppet.example.com', num_clones: 3 } }

          it { is_expected.to compile.with_all_deps }
        end
      end

      context 'with a clone_army fact from another interval' do
        let(:facts) { super().merge(clone_army: { 'capacity' => { 'daemon' => 3, 'timer' => 12 } }) }

        it "computes its own capacity from memory and cores, not the fact's" do
          is_expected.to have_clone_army_clone_resource_count(225)
        end
      end

      context 'beyond a capacity of 0' do
        let(:facts) { super().merge(memory: { 'system' => { 'total_bytes' => 2 * GIB } }) }
        let(:params) { { server: 'puppet.example.com', num_clones: 1 } }

        it { is_expected.to compile.and_raise_error(%r{num_clones => 1 .* capacity is 0 clones}m) }
      end

      context 'when 0' do
        let(:params) { { server: 'puppet.example.com', num_clones: 0 } }

        it { is_expected.to compile.with_all_deps }
        it { is_expected.to have_clone_army_clone_resource_count(0) }
        it { is_expected.to contain_clone_army_base('debian-12') }
      end

      context 'when negative' do
        let(:params) { { server: 'puppet.example.com', num_clones: -1 } }

        it { is_expected.to compile.and_raise_error(%r{parameter 'num_clones' expects}) }
      end
    end

    describe 'shrinking' do
      let(:params) { { server: 'puppet.example.com', num_clones: 2 } }
      let(:listed) { ['clone1', 'clone2', 'clone3', 'clone10', 'clone01', 'clone0', 'test1', 'clone3x'] }
      let(:facts) do
        super().merge(clone_army: {
                        'capacity' => { 'daemon' => 225, 'timer' => 1126 },
                        'bases' => ['debian-12'],
                        'clones' => { 'names' => listed, 'total' => listed.size, 'running' => listed.size, 'stopped' => 0 },
                      })
      end

      it 'removes the clones named clone<N> with N > num_clones that the fact lists' do
        ['clone3', 'clone10'].each do |clone|
          is_expected.to contain_clone_army_clone(clone).only_with(ensure: 'absent', helper: '/usr/local/sbin/clone-army')
        end
      end

      it 'keeps clone1..num_clones' do
        is_expected.to contain_clone_army_clone('clone1').with_ensure('present')
        is_expected.to contain_clone_army_clone('clone2').with_ensure('present')
      end

      it 'leaves clones with other names (made by hand) alone' do
        ['clone01', 'clone0', 'test1', 'clone3x'].each do |clone|
          is_expected.not_to contain_clone_army_clone(clone)
        end
        is_expected.to have_clone_army_clone_resource_count(4)
      end

      context 'when num_clones is 0' do
        let(:params) { { server: 'puppet.example.com', num_clones: 0 } }

        it 'removes every clone<N>' do
          ['clone1', 'clone2', 'clone3', 'clone10'].each do |clone|
            is_expected.to contain_clone_army_clone(clone).with_ensure('absent')
          end
          is_expected.to have_clone_army_clone_resource_count(4)
        end
      end

      context 'when the fact carries a listing error' do
        let(:facts) do
          super().merge(clone_army: { 'capacity' => { 'daemon' => 225, 'timer' => 1126 },
                                      'error' => 'clone-army clone list failed [systemd]: unreachable' })
        end

        it 'removes nothing and still declares the fleet' do
          is_expected.to compile.with_all_deps
          is_expected.to have_clone_army_clone_resource_count(2)
        end
      end
    end

    describe 'clone_ensure' do
      ['present', 'running', 'stopped'].each do |state|
        context "when #{state}" do
          let(:params) { { server: 'puppet.example.com', num_clones: 1, clone_ensure: state } }

          it { is_expected.to contain_clone_army_clone('clone1').with_ensure(state) }
        end
      end

      context 'when absent (not a fleet state; shrink num_clones instead)' do
        let(:params) { { server: 'puppet.example.com', clone_ensure: 'absent' } }

        it { is_expected.to compile.and_raise_error(%r{parameter 'clone_ensure' expects}) }
      end
    end

    describe 'puppet_source and pe_ca_cert' do
      let(:params) { { server: 'puppet.example.com', num_clones: 1 } }

      it 'builds the base from the distribution by default' do
        is_expected.to contain_clone_army_base('debian-12').with(puppet_source: 'distro', server: nil, pe_ca_cert: nil)
      end

      context 'when a PE server compiled the catalog' do
        let(:node) { 'compiler.example.com' }

        around(:each) do |example|
          RSpec.configuration.trusted_server_facts = true
          example.run
        ensure
          RSpec.configuration.trusted_server_facts = false
        end

        # rspec-puppet caches catalogues by facts and parameters, not by
        # server facts: a count of its own keeps this context's apart.
        let(:params) { { server: 'puppet.example.com', num_clones: 3 } }

        # What PE's servers add to $server_facts.
        def server_facts_hash
          super.merge('pe_serverversion' => '2023.8.1')
        end

        it 'builds a PE base verified against the host agent\'s CA copy' do
          is_expected.to contain_clone_army_base('debian-12')
            .with(puppet_source: 'pe', server: 'puppet.example.com', pe_ca_cert: '/etc/puppetlabs/puppet/ssl/certs/ca.pem')
        end

        context 'and puppet_source is given' do
          let(:params) { { server: 'puppet.example.com', num_clones: 1, puppet_source: 'openvox' } }

          it { is_expected.to contain_clone_army_base('debian-12').with(puppet_source: 'openvox', pe_ca_cert: nil) }
        end
      end

      context 'when the host has PE\'s pe_server_version fact (bolt apply, puppet apply on PE infrastructure)' do
        let(:facts) { super().merge(pe_server_version: '2023.8.1') }

        it { is_expected.to contain_clone_army_base('debian-12').with_puppet_source('pe') }
      end

      context 'when a compiling server is not PE' do
        let(:node) { 'compiler.example.com' }
        let(:params) { { server: 'puppet.example.com', num_clones: 2 } }

        around(:each) do |example|
          RSpec.configuration.trusted_server_facts = true
          example.run
        ensure
          RSpec.configuration.trusted_server_facts = false
        end

        it { is_expected.to contain_clone_army_base('debian-12').with_puppet_source('distro') }
      end

      ['distro', 'puppet', 'openvox'].each do |source|
        context "when #{source}" do
          let(:params) { { server: 'puppet.example.com', num_clones: 1, puppet_source: source } }

          it { is_expected.to contain_clone_army_base('debian-12').with(puppet_source: source, pe_ca_cert: nil) }
        end
      end

      context 'when pe with a CA certificate' do
        let(:params) { { server: 'puppet.example.com', num_clones: 1, puppet_source: 'pe', pe_ca_cert: '/root/pe-ca.pem' } }

        it do
          is_expected.to contain_clone_army_base('debian-12')
            .with(puppet_source: 'pe', server: 'puppet.example.com', pe_ca_cert: '/root/pe-ca.pem')
        end
      end

      context 'when pe_ca_cert comes without pe' do
        let(:params) { { server: 'puppet.example.com', num_clones: 1, puppet_source: 'openvox', pe_ca_cert: '/root/pe-ca.pem' } }

        it { is_expected.to compile.and_raise_error(%r{pe_ca_cert is only used with puppet_source => 'pe'; puppet_source is 'openvox'}) }
      end

      context 'when unknown' do
        let(:params) { { server: 'puppet.example.com', puppet_source: 'gems' } }

        it { is_expected.to compile.and_raise_error(%r{parameter 'puppet_source' expects}) }
      end
    end

    describe 'root_password_hash and challenge_password' do
      let(:hash) { '$6$saltsalt$abcdefghijklmnopqrstuvwxyz./ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' }

      context 'when not given' do
        let(:params) { { server: 'puppet.example.com', num_clones: 1 } }

        it 'gives the clones neither' do
          is_expected.to contain_clone_army_clone('clone1').without_root_password_hash.without_challenge_password
        end
      end

      context 'when given as Sensitive' do
        let(:params) do
          { server: 'puppet.example.com', num_clones: 2, root_password_hash: sensitive(hash), challenge_password: sensitive('s3cret') }
        end

        it 'passes them on to every clone, still Sensitive' do
          ['clone1', 'clone2'].each do |clone|
            is_expected.to contain_clone_army_clone(clone).with(root_password_hash: sensitive(hash),
                                                                challenge_password: sensitive('s3cret'))
          end
        end
      end

      context 'when root_password_hash is not a crypt hash' do
        let(:params) { { server: 'puppet.example.com', num_clones: 1, root_password_hash: sensitive('puppetlabs') } }

        it 'fails, saying what a hash looks like without showing the value' do
          is_expected.to compile.and_raise_error(
            %r{root_password_hash must be a crypt\(3\) password hash such as '\$6\$<salt>\$<hash>'.*\(not shown\)}m,
          )
          expect { catalogue }.to(raise_error { |error| expect(error.message).not_to include('puppetlabs') })
        end
      end

      context 'when given as plain strings' do
        let(:params) { { server: 'puppet.example.com', num_clones: 1, root_password_hash: hash } }

        it { is_expected.to compile.and_raise_error(%r{parameter 'root_password_hash' expects a value of type Undef or Sensitive}) }
      end

      context 'when challenge_password is empty' do
        let(:params) { { server: 'puppet.example.com', num_clones: 1, challenge_password: sensitive('') } }

        it { is_expected.to compile.and_raise_error(%r{challenge_password must be one line of 1 to 255 bytes.*\(not shown\)}) }
      end
    end

    describe 'load shape' do
      let(:params) { { server: 'puppet.example.com', num_clones: 3 } }

      it 'gives every clone the defaults: daemon mode, phased over the fleet, no limits, no facts' do
        [1, 2, 3].each do |index|
          is_expected.to contain_clone_army_clone("clone#{index}").with(
            run_mode: 'daemon', runinterval: 1800, splay: 0, phase_index: index - 1, phase_count: 3, phasing: 'prefix-even',
            memory_max: 'none', cpu_quota: 'none', tasks_max: 'none', facts: {}, generated_facts: 0,
            churn_percent: 0, ramp_up: 0
          )
        end
      end

      context 'with every setting' do
        let(:params) do
          {
            server: 'puppet.example.com', num_clones: 2, run_mode: 'timer', runinterval: 900, splay: 30,
            fleet_facts: { 'role' => 'web', 'tier' => 3 }, clone_facts: { 'clone2' => { 'role' => 'db', 'canary' => true } },
            generated_facts: 500, churn_percent: 15, memory_max: '256M', cpu_quota: '50%', tasks_max: 512, ramp_up: 60,
            agent_noop: true, phasing: 'fleet-even'
          }
        end

        it { is_expected.to compile.with_all_deps }

        it 'passes them to every clone, its own facts merged over the fleet\'s' do
          is_expected.to contain_clone_army_clone('clone1').with(
            run_mode: 'timer', runinterval: 900, splay: 30, phase_index: 0, phase_count: 2, phasing: 'fleet-even', memory_max: '256M',
            cpu_quota: '50%', tasks_max: 512, facts: { 'role' => 'web', 'tier' => 3 }, generated_facts: 500,
            churn_percent: 15, ramp_up: 60, agent_noop: true
          )
          is_expected.to contain_clone_army_clone('clone2').with(
            phase_index: 1, phase_count: 2, facts: { 'role' => 'db', 'tier' => 3, 'canary' => true },
          )
        end
      end

      {
        run_mode: 'cron', runinterval: 59, splay: -1, generated_facts: 10_000, churn_percent: 101, ramp_up: -1,
        memory_max: '512m', cpu_quota: '0%', tasks_max: 0, fleet_facts: { 'Role' => 'web' },
        clone_facts: { 'Clone1' => {} }, agent_noop: 'yes', phasing: 'even'
      }.each do |parameter, bad|
        context "with #{parameter} => #{bad.inspect}" do
          let(:params) { { server: 'puppet.example.com', num_clones: 1, parameter => bad } }

          it { is_expected.to compile.and_raise_error(%r{parameter '#{parameter}'}) }
        end
      end

      it 'refuses a fact value the helper would refuse' do
        params[:fleet_facts] = { 'role' => ['web'] }
        is_expected.to compile.and_raise_error(%r{parameter 'fleet_facts'})
      end

      context 'with clone_facts for clones the class does not declare' do
        let(:params) do
          { server: 'puppet.example.com', num_clones: 2, clone_facts: { 'clone2' => {}, 'clone3' => {}, 'test1' => {} } }
        end

        it 'warns, naming them' do
          allow(Puppet::Util::Log).to receive(:create).and_call_original
          warning = %r{clone_facts names clones that are not among clone1 \.\. clone2 and are ignored: clone3, test1}
          expect(Puppet::Util::Log).to receive(:create).with(hash_including(level: :warning, message: warning)).and_call_original
          is_expected.to compile
        end
      end

      context 'with clone_facts only for declared clones' do
        let(:params) { { server: 'puppet.example.com', num_clones: 2, clone_facts: { 'clone1' => { 'role' => 'db' } } } }

        it 'does not warn' do
          allow(Puppet::Util::Log).to receive(:create).and_call_original
          expect(Puppet::Util::Log).not_to receive(:create).with(hash_including(message: %r{clone_facts}))
          is_expected.to contain_clone_army_clone('clone1').with_facts('role' => 'db')
        end
      end

      context 'with cpu_quota as an Integer and memory_max in bytes' do
        let(:params) { { server: 'puppet.example.com', num_clones: 1, cpu_quota: 200, memory_max: 268_435_456 } }

        it { is_expected.to contain_clone_army_clone('clone1').with(cpu_quota: 200, memory_max: 268_435_456) }
      end

      describe 'apply mode (masterless)' do
        context 'with an apply source and no server' do
          let(:params) { { run_mode: 'apply', apply_source: '/srv/clone-army-apply', num_clones: 2 } }

          it { is_expected.to compile.with_all_deps }

          it 'gives every clone the source and no server' do
            [1, 2].each do |index|
              is_expected.to contain_clone_army_clone("clone#{index}").with(
                run_mode: 'apply', apply_source: '/srv/clone-army-apply', server: nil,
                certname: "clone#{index}.loadhost.example.com", phase_index: index - 1, phase_count: 2
              )
            end
          end
        end

        context 'with a server port and no server' do
          let(:params) { { run_mode: 'apply', apply_source: '/srv/clone-army-apply', num_clones: 1, server_port: 8141 } }

          it { is_expected.to compile.and_raise_error(%r{server_port is the port of `server`, and in run_mode => 'apply' without}) }
        end

        context 'without an apply source' do
          let(:params) { { run_mode: 'apply', num_clones: 1 } }

          it { is_expected.to compile.and_raise_error(%r{run_mode => 'apply' needs apply_source}) }
        end

        context 'with an apply source in another mode' do
          let(:params) { { server: 'puppet.example.com', run_mode: 'timer', apply_source: '/srv/a', num_clones: 1 } }

          it { is_expected.to compile.and_raise_error(%r{apply_source is only used with run_mode => 'apply'; run_mode is 'timer'}) }
        end

        context 'with a PE base and no server' do
          let(:params) { { run_mode: 'apply', apply_source: '/srv/a', num_clones: 1, puppet_source: 'pe' } }

          it { is_expected.to compile.and_raise_error(%r{puppet_source => 'pe' builds the base .* so pass `server`}) }
        end

        context 'with a relative apply source' do
          let(:params) { { run_mode: 'apply', apply_source: 'srv/a', num_clones: 1 } }

          it { is_expected.to compile.and_raise_error(%r{parameter 'apply_source'}) }
        end

        it 'leaves apply_source unset in the other modes' do
          is_expected.to contain_clone_army_clone('clone1').with(run_mode: 'daemon', apply_source: nil)
        end
      end

      describe 'capacity by run mode' do
        let(:facts) { super().merge(memory: { 'system' => { 'total_bytes' => 3 * GIB } }) }

        ['timer', 'manual'].each do |mode|
          context "in #{mode} mode" do
            let(:params) { { server: 'puppet.example.com', run_mode: mode } }

            it 'defaults to the timer capacity: (3 GiB - 2 GiB) / 20 MiB' do
              is_expected.to have_clone_army_clone_resource_count(51)
            end
          end

          context "in #{mode} mode beyond the timer capacity" do
            let(:params) { { server: 'puppet.example.com', run_mode: mode, num_clones: 52 } }

            it 'fails, naming the memory bound and the other' do
              other = mode == 'manual' ? 'no CPU bound in manual mode' : 'the CPU bound is 1080'
              reason = "total memory minus 2048 MiB, divided by 20 MiB a clone in #{mode} mode; #{other}"
              is_expected.to compile.and_raise_error(
                %r{num_clones => 52 .* capacity is 51 clones, bound by memory \(#{Regexp.escape(reason)}\)}m,
              )
            end
          end
        end
      end

      describe 'capacity bound by CPU' do
        # 75 % of 2 cores over 600 s at 2.5 CPU-s a run: 360 runs an interval; memory holds 1126.
        let(:params) { { server: 'puppet.example.com', run_mode: 'timer', runinterval: 600 } }

        it 'defaults to the CPU bound' do
          is_expected.to have_clone_army_clone_resource_count(360)
        end

        context 'beyond it' do
          let(:params) { super().merge(num_clones: 361) }

          it 'fails, naming the CPU bound, how it was reckoned and the memory bound' do
            reason = 'one run every 600 s a clone at 2.5 CPU-s a run within 75 % of 2 cores; the memory bound is 1126'
            is_expected.to compile.and_raise_error(
              %r{num_clones => 361 .* capacity is 360 clones, bound by cpu \(#{Regexp.escape(reason)}\).*force_num_clones => true}m,
            )
          end
        end

        context 'with force_num_clones' do
          let(:params) { super().merge(num_clones: 361, force_num_clones: true) }

          it { is_expected.to have_clone_army_clone_resource_count(361) }
        end

        context 'on a host whose facts have no processor count' do
          let(:facts) { super().reject { |name, _| name == :processors } }

          it 'takes one core: 75 % of 1 core over 600 s at 2.5 CPU-s' do
            is_expected.to have_clone_army_clone_resource_count(180)
          end
        end

        context 'with cpu_share_percent => 50' do
          let(:params) { super().merge(cpu_share_percent: 50) }

          it { is_expected.to have_clone_army_clone_resource_count(240) }
        end

        context 'with cpu_seconds_per_run => 5' do
          let(:params) { super().merge(cpu_seconds_per_run: 5) }

          it { is_expected.to have_clone_army_clone_resource_count(180) }
        end

        context 'with cpu_share_percent => 0' do
          let(:params) { super().merge(cpu_share_percent: 0) }

          it { is_expected.to compile.and_raise_error(%r{cpu_share_percent}) }
        end

        context 'with cpu_seconds_per_run => 0' do
          let(:params) { super().merge(cpu_seconds_per_run: 0) }

          it { is_expected.to compile.and_raise_error(%r{cpu_seconds_per_run}) }
        end
      end
    end

    describe 'base and helper_path' do
      let(:params) do
        { server: 'puppet.example.com', num_clones: 1, base: 'bookworm-lab', helper_path: '/opt/clone-army/bin/clone-army' }
      end

      it { is_expected.to contain_clone_army_base('bookworm-lab').with_helper('/opt/clone-army/bin/clone-army') }
      it { is_expected.to contain_clone_army_clone('clone1').with(base: 'bookworm-lab', helper: '/opt/clone-army/bin/clone-army') }
      it { is_expected.to contain_file('/opt/clone-army/bin/clone-army').with_mode('0755') }

      it 'lets the clones autorequire the base and the helper' do
        is_expected.to contain_clone_army_clone('clone1')
          .that_requires(['Clone_army_base[bookworm-lab]', 'File[/opt/clone-army/bin/clone-army]'])
      end

      context 'with an invalid base name' do
        let(:params) { { server: 'puppet.example.com', base: 'Debian_12' } }

        it { is_expected.to compile.and_raise_error(%r{parameter 'base' expects}) }
      end

      context 'with a relative helper_path' do
        let(:params) { { server: 'puppet.example.com', helper_path: 'bin/clone-army' } }

        it { is_expected.to compile.and_raise_error(%r{parameter 'helper_path' expects}) }
      end
    end
  end
end
