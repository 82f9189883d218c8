# frozen_string_literal: true

require 'spec_helper'

describe Puppet::Type.type(:clone_army_clone) do
  let(:catalog) { Puppet::Resource::Catalog.new }
  let(:provider) do
    instance_double('Puppet::Type::Clone_army_clone::ProviderClone_army', state: :absent, exists?: false)
  end

  def clone(attributes = {})
    described_class.new({ name: 'clone1', catalog: catalog }.merge(attributes))
  end

  it 'has name as its namevar' do
    expect(described_class.key_attributes).to eq([:name])
  end

  it 'is refreshable' do
    expect(described_class.instance_methods).to include(:refresh)
  end

  describe 'name' do
    ['clone1', 'c', 'clone-army-1', 'x' * 64].each do |name|
      it "accepts #{name.inspect}" do
        expect(clone(name: name)[:name]).to eq(name)
      end
    end

    ['Clone1', '-clone', 'clone_1', 'clone.1', '', 'x' * 65, 'a/b', '--start'].each do |name|
      it "refuses #{name.inspect}, naming the attribute and what is allowed" do
        expect { clone(name: name) }.to raise_error(
          Puppet::ResourceError, %r{name must be 1 to 64 characters of a-z, 0-9 and '-'}
        )
      end
    end
  end

  describe 'ensure' do
    it 'has no default (leaving the clone as it is)' do
      expect(clone[:ensure]).to be_nil
    end

    ['present', 'running', 'stopped', 'absent'].each do |value|
      it "accepts #{value}" do
        expect(clone(ensure: value)[:ensure]).to eq(value.to_sym)
      end
    end

    it 'refuses anything else' do
      expect { clone(ensure: 'enabled') }.to raise_error(Puppet::ResourceError, %r{Invalid value "enabled"})
    end

    describe 'insync?' do
      def insync(should, is)
        clone(ensure: should).property(:ensure).insync?(is)
      end

      it 'present is in sync with running and stopped, not with absent' do
        expect(insync('present', :running)).to be true
        expect(insync('present', :stopped)).to be true
        expect(insync('present', :absent)).to be false
      end

      it 'running, stopped and absent need exactly that state' do
        expect(insync('running', :running)).to be true
        expect(insync('running', :stopped)).to be false
        expect(insync('stopped', :stopped)).to be true
        expect(insync('stopped', :running)).to be false
        expect(insync('absent', :absent)).to be true
        expect(insync('absent', :stopped)).to be false
      end
    end

    it 'says how a clone was created or removed' do
      expect(clone(ensure: 'present').property(:ensure).change_to_s(:absent, :present)).to eq('created and started')
      expect(clone(ensure: 'stopped').property(:ensure).change_to_s(:absent, :stopped)).to eq('created (left stopped)')
      expect(clone(ensure: 'running').property(:ensure).change_to_s(:stopped, :running)).to eq("ensure changed 'stopped' to 'running'")
      expect(clone(ensure: 'absent').property(:ensure).change_to_s(:running, :absent)).to eq('removed (was running)')
    end

    it 'names its events like a service does' do
      { present: :clone_created, running: :clone_started, stopped: :clone_stopped, absent: :clone_removed }
        .each do |value, event|
          expect(described_class.attrclass(:ensure).value_option(value, :event)).to eq(event)
        end
    end

    it 'lets starting a clone swallow pending refreshes' do
      expect(described_class.attrclass(:ensure).value_option(:running, :invalidate_refreshes)).to be true
      expect(described_class.attrclass(:ensure).value_option(:present, :invalidate_refreshes)).to be true
    end

    describe 'sync' do
      let(:resource) { clone(ensure: should, base: 'debian-12', server: 'puppet.example.com') }
      let(:ensure_property) { resource.property(:ensure) }

      before(:each) { allow(resource).to receive(:provider).and_return(provider) }

      context 'present, when the clone is absent' do
        let(:should) { 'present' }

        it 'creates and starts it' do
          expect(provider).to receive(:create).with(start: true)
          ensure_property.sync
        end
      end

      context 'running' do
        let(:should) { 'running' }

        it 'creates and starts an absent clone' do
          expect(provider).to receive(:create).with(start: true)
          ensure_property.sync
        end

        it 'brings the configuration in sync, then starts an existing clone' do
          allow(provider).to receive(:exists?).and_return(true)
          allow(provider).to receive(:base).and_return('debian-12')
          allow(provider).to receive(:server).and_return('old.example.com')
          expect(provider).to receive(:server=).with('puppet.example.com').ordered
          expect(provider).to receive(:flush_changes).ordered
          expect(provider).to receive(:start).ordered
          ensure_property.sync
        end
      end

      context 'stopped' do
        let(:should) { 'stopped' }

        it 'creates an absent clone without starting it' do
          expect(provider).to receive(:create).with(start: false)
          ensure_property.sync
        end

        it 'stops an existing clone' do
          allow(provider).to receive(:exists?).and_return(true)
          allow(provider).to receive(:base).and_return('debian-12')
          allow(provider).to receive(:server).and_return('puppet.example.com')
          expect(provider).to receive(:flush_changes)
          expect(provider).to receive(:stop)
          ensure_property.sync
        end
      end

      context 'absent' do
        let(:should) { 'absent' }

        it 'destroys the clone' do
          expect(provider).to receive(:destroy)
          ensure_property.sync
        end
      end
    end
  end

  describe 'properties' do
    it 'checks base like a name' do
      expect(clone(base: 'debian-12')[:base]).to eq('debian-12')
      expect { clone(base: 'Debian 12') }.to raise_error(Puppet::ResourceError, %r{base must be 1 to 64 characters})
    end

    ['server', 'certname'].each do |attribute|
      describe attribute do
        ['puppet', 'puppet.example.com', 'clone1.load-host.example.com', 'PUPPET.Example.com'].each do |value|
          it "accepts #{value.inspect}" do
            expect(clone(attribute.to_sym => value)[attribute.to_sym]).to eq(value)
          end
        end

        ['puppet example.com', 'puppet..example.com', '-puppet', 'puppet.', 'pup_pet', 'a' * 254,
         "#{'a' * 64}.example.com", '--server'].each do |value|
          it "refuses #{value[0, 30].inspect}, naming the attribute" do
            expect { clone(attribute.to_sym => value) }.to raise_error(
              Puppet::ResourceError, %r{#{attribute} must be a hostname}
            )
          end
        end
      end
    end

    describe 'server_port' do
      it 'takes a port, as an Integer or digits' do
        expect(clone(server_port: 8141)[:server_port]).to eq(8141)
        expect(clone(server_port: '65535')[:server_port]).to eq(65_535)
        expect(clone(server_port: 1)[:server_port]).to eq(1)
      end

      [0, 65_536, -1, '8140x', 'http', 81.4].each do |value|
        it "refuses #{value.inspect}, naming the attribute and the range" do
          expect { clone(server_port: value) }.to raise_error(
            Puppet::ResourceError, %r{server_port must be an integer from 1 to 65535}
          )
        end
      end
    end

    it 'wants an absolute helper path' do
      expect { clone(helper: 'clone-army') }.to raise_error(Puppet::ResourceError, %r{helper must be an absolute path})
    end
  end

  describe 'refresh' do
    let(:resource) { clone(ensure: 'present') }

    before(:each) { allow(resource).to receive(:provider).and_return(provider) }

    it 'restarts a running clone' do
      allow(provider).to receive(:state).and_return(:running)
      expect(provider).to receive(:restart)
      resource.refresh
    end

    it 'leaves a stopped clone stopped' do
      allow(provider).to receive(:state).and_return(:stopped)
      expect(provider).not_to receive(:restart)
      resource.refresh
    end

    it 'does nothing for an absent clone' do
      expect(provider).not_to receive(:restart)
      resource.refresh
    end
  end

  describe 'autorequire' do
    let(:helper_file) { Puppet::Type.type(:file).new(path: '/usr/local/sbin/clone-army') }
    let(:base) { Puppet::Type.type(:clone_army_base).new(name: 'debian-12') }

    def relationships(resource)
      [helper_file, base, resource].each { |r| catalog.add_resource(r) }
      (resource.autorequire + resource.autobefore).map { |edge| [edge.source.ref, edge.target.ref] }
    end

    it 'requires its base and the helper' do
      expect(relationships(clone(ensure: 'present', base: 'debian-12'))).to contain_exactly(
        ['File[/usr/local/sbin/clone-army]', 'Clone_army_clone[clone1]'],
        ['Clone_army_base[debian-12]', 'Clone_army_clone[clone1]'],
      )
    end

    it 'goes before its base when it is to be removed' do
      expect(relationships(clone(ensure: 'absent', base: 'debian-12'))).to contain_exactly(
        ['File[/usr/local/sbin/clone-army]', 'Clone_army_clone[clone1]'],
        ['Clone_army_clone[clone1]', 'Clone_army_base[debian-12]'],
      )
    end
  end

  describe 'load shape' do
    it 'takes run_mode daemon, timer, manual or apply' do
      ['daemon', 'timer', 'manual', 'apply'].each { |mode| expect(clone(run_mode: mode)[:run_mode]).to eq(mode.to_sym) }
      expect { clone(run_mode: 'cron') }.to raise_error(Puppet::ResourceError, %r{Invalid value "cron"})
    end

    it 'takes phasing prefix-even or fleet-even, the helper\'s rules' do
      ['prefix-even', 'fleet-even'].each { |rule| expect(clone(phasing: rule)[:phasing]).to eq(rule.to_sym) }
      expect { clone(phasing: 'even') }.to raise_error(Puppet::ResourceError, %r{Invalid value "even"})
    end

    it 'takes twin as a node\'s certname, or absent for none' do
      expect(clone(twin: 'web01.example.com')[:twin]).to eq('web01.example.com')
      expect(clone(twin: 'absent')[:twin]).to eq(:absent)
      ['Web01', '../etc/passwd', '-a', ''].each do |bad|
        expect { clone(twin: bad) }.to raise_error(Puppet::ResourceError, %r{twin must be a certname: 1 to 250 characters})
      end
    end

    it 'requires the import of a twin\'s node, and none for a plain clone' do
      catalog = Puppet::Resource::Catalog.new
      twins = Puppet::Type.type(:clone_army_twins).new(name: 'estate', source: { 'facts_dir' => '/srv/estate' })
      twin = clone(twin: 'web01.example.com')
      plain = Puppet::Type.type(:clone_army_clone).new(name: 'clone2', twin: 'absent')
      [twins, twin, plain].each { |resource| catalog.add_resource(resource) }
      expect(twin.autorequire.map { |edge| edge.source.to_s }).to include('Clone_army_twins[estate]')
      expect(plain.autorequire.map { |edge| edge.source.to_s }).not_to include('Clone_army_twins[estate]')
    end

    it 'takes agent_noop as a boolean, and nothing else' do
      expect(clone(agent_noop: true)[:agent_noop]).to eq(:true)
      expect(clone(agent_noop: false)[:agent_noop]).to eq(:false)
      expect { clone(agent_noop: 'yes') }.to raise_error(Puppet::ResourceError, %r{agent_noop.*Valid values are true, false})
    end

    it 'takes apply_source as an absolute plain path, with run_mode apply only' do
      expect(clone(run_mode: 'apply', apply_source: '/srv/clone-army-apply')[:apply_source]).to eq('/srv/clone-army-apply')
      ['srv/a', '/srv/a b', '/srv/a:b', '/srv/../etc', '', 5].each do |bad|
        expect { clone(run_mode: 'apply', apply_source: bad) }
          .to raise_error(Puppet::ResourceError, %r{apply_source must be an absolute path of a host directory with manifests/})
      end
      expect { clone(run_mode: 'timer', apply_source: '/srv/a') }
        .to raise_error(Puppet::ResourceError, %r{apply_source is only used with run_mode => apply; run_mode is timer})
    end

    {
      runinterval: [60, 604_800], splay: [0, 604_800], generated_facts: [0, 9999], churn_percent: [0, 100],
      ramp_up: [0, 86_400]
    }.each do |attribute, (min, max)|
      it "takes #{attribute} from #{min} to #{max}, also as a string of digits" do
        expect(clone(attribute => min)[attribute]).to eq(min)
        expect(clone(attribute => max.to_s)[attribute]).to eq(max)
        [min - 1, max + 1, '1h', 1.5].each do |bad|
          expect { clone(attribute => bad) }
            .to raise_error(Puppet::ResourceError, %r{#{attribute} must be an integer from #{min} to #{max}; got})
        end
      end
    end

    it 'defaults ramp_up to 0' do
      expect(clone[:ramp_up]).to eq(0)
    end

    it 'takes the phase as a pair with the index below the count' do
      resource = clone(phase_index: 9, phase_count: 10)
      expect([resource[:phase_index], resource[:phase_count]]).to eq([9, 10])
      expect { clone(phase_index: 10, phase_count: 10) }
        .to raise_error(Puppet::ResourceError, %r{phase_index must be below phase_count \(0 to 9\); got 10})
      expect { clone(phase_index: 1) }.to raise_error(Puppet::ResourceError, %r{phase_index and phase_count go together})
      expect { clone(phase_index: 0, phase_count: 0) }
        .to raise_error(Puppet::ResourceError, %r{phase_count must be an integer from 1 to 100000})
    end

    it 'takes memory_max as bytes, with a suffix, or none' do
      expect(clone(memory_max: 536_870_912)[:memory_max]).to eq('536870912')
      expect(clone(memory_max: '512M')[:memory_max]).to eq('512M')
      expect(clone(memory_max: 'none')[:memory_max]).to eq('none')
      ['512m', '0', '1.5G', '512 M', '', -1].each do |bad|
        expect { clone(memory_max: bad) }.to raise_error(Puppet::ResourceError, %r{memory_max must be a positive number of bytes})
      end
    end

    it 'takes cpu_quota as a percentage, an integer, or none' do
      expect(clone(cpu_quota: '50%')[:cpu_quota]).to eq('50%')
      expect(clone(cpu_quota: 200)[:cpu_quota]).to eq('200%')
      expect(clone(cpu_quota: 'none')[:cpu_quota]).to eq('none')
      ['0%', '100001%', '50', '5.5%', 0].each do |bad|
        expect { clone(cpu_quota: bad) }.to raise_error(Puppet::ResourceError, %r{cpu_quota must be a percentage of one CPU})
      end
    end

    it 'takes tasks_max from 1 to 4194304, or none' do
      expect(clone(tasks_max: '4096')[:tasks_max]).to eq(4096)
      expect(clone(tasks_max: 'none')[:tasks_max]).to eq('none')
      expect { clone(tasks_max: 0) }.to raise_error(Puppet::ResourceError, %r{tasks_max must be an integer from 1 to 4194304})
    end

    it 'takes facts as a Hash of names to strings, numbers or booleans' do
      facts = { 'role' => 'web', 'tier' => 3, 'weight' => 0.5, 'canary' => false }
      expect(clone(facts: facts)[:facts]).to eq(facts)
      expect { clone(facts: { 'Role' => 'web' }) }.to raise_error(Puppet::ResourceError, %r{fact name "Role" is invalid})
      expect { clone(facts: { 'role' => ['web'] }) }.to raise_error(Puppet::ResourceError, %r{fact role must be a string})
      expect { clone(facts: { 'role' => 'x' * 4097 }) }.to raise_error(Puppet::ResourceError, %r{at most 4096 characters})
      expect { clone(facts: 'role=web') }.to raise_error(Puppet::ResourceError, %r{facts must be a Hash})
    end

    describe 'insync?' do
      before(:each) do
        allow(provider).to receive(:run_mode).and_return(:timer)
        allow(provider).to receive(:generated_facts).and_return(0)
      end

      def insync(attribute, should, is, attributes = {})
        resource = clone({ attribute => should }.merge(attributes))
        allow(resource).to receive(:provider).and_return(provider)
        resource.property(attribute).insync?(is)
      end

      it 'compares memory_max by the bytes it means' do
        expect(insync(:memory_max, '1G', '1024M')).to be true
        expect(insync(:memory_max, 1_073_741_824, '1G')).to be true
        expect(insync(:memory_max, '1G', '1000M')).to be false
        expect(insync(:memory_max, 'none', 'none')).to be true
        expect(insync(:memory_max, 'none', '1G')).to be false
      end

      it 'compares cpu_quota by its percentage' do
        expect(insync(:cpu_quota, 50, '50%')).to be true
        expect(insync(:cpu_quota, '50%', 'none')).to be false
      end

      it 'compares facts as a whole, numbers by value' do
        expect(insync(:facts, { 'tier' => 3, 'role' => 'web' }, { 'role' => 'web', 'tier' => 3 })).to be true
        expect(insync(:facts, { 'tier' => 3 }, { 'tier' => '3' })).to be false
        expect(insync(:facts, {}, :absent)).to be false
      end

      it 'takes the schedule as in sync in manual mode, asked for or current' do
        expect(insync(:runinterval, 900, :absent, run_mode: 'manual')).to be true
        expect(insync(:runinterval, 900, :absent, run_mode: 'timer')).to be false
        allow(provider).to receive(:run_mode).and_return(:manual)
        expect(insync(:splay, 60, :absent)).to be true
        expect(insync(:phase_index, 1, :absent, phase_count: 2)).to be true
        expect(insync(:phasing, 'prefix-even', :absent)).to be true
      end

      it 'takes a clone phased by another rule, or by none it names, as out of sync' do
        expect(insync(:phasing, 'prefix-even', :'fleet-even', run_mode: 'timer')).to be false
        expect(insync(:phasing, 'prefix-even', :absent, run_mode: 'timer')).to be false
        expect(insync(:phasing, 'prefix-even', :'prefix-even', run_mode: 'timer')).to be true
      end

      it 'takes churn_percent as in sync without generated facts' do
        expect(insync(:churn_percent, 15, :absent, generated_facts: 0)).to be true
        expect(insync(:churn_percent, 15, :absent, generated_facts: 500)).to be false
        allow(provider).to receive(:generated_facts).and_return(500)
        expect(insync(:churn_percent, 15, 10)).to be false
        expect(insync(:churn_percent, 15, 15)).to be true
      end
    end
  end
end

describe Puppet::Type.type(:clone_army_clone), 'secrets' do
  let(:hash) { '$y$j9T$0123456789abcdefABCDE.$ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop/' }

  def clone(attributes = {})
    described_class.new({ name: 'clone1', catalog: Puppet::Resource::Catalog.new }.merge(attributes))
  end

  def sensitive(value)
    Puppet::Pops::Types::PSensitiveType::Sensitive.new(value)
  end

  describe 'root_password_hash' do
    [
      '$y$j9T$0123456789abcdefABCDE.$ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop/',
      '$6$saltsalt$Pn0Bxv7N0n9w1QFbfpWKVHqVtb2Ag5BKJqQEo8B4mX6Q0c9B5xjdQ8Gl7BvCfIoVi/3HMW1vDGSJpnDzVcmQf.',
      '$6$rounds=5000$saltsalt$abc/def.',
      '$5$salt$hash',
      '$1$salt$hash',
      '$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW',
    ].each do |good|
      it "accepts #{good[0, 12]}..." do
        expect(clone(root_password_hash: good)[:root_password_hash]).to eq(good)
      end
    end

    ['puppetlabs', '!', '*', '$6$salt', '$6$salt$has h', '$9$salt$hash', "$6$salt$hash\n", 'root:$6$salt$hash'].each do |bad|
      it "refuses #{bad.inspect} without showing it" do
        expect { clone(root_password_hash: bad) }.to raise_error(Puppet::ResourceError, %r{must be a crypt\(3\)}) do |error|
          expect(error.message).not_to include(bad.strip) unless ['!', '*'].include?(bad)
        end
      end
    end

    it 'takes a Sensitive value and keeps the plain hash for the provider' do
      expect(clone(root_password_hash: sensitive(hash))[:root_password_hash]).to eq(hash)
    end

    it 'is always sensitive, even when given as a plain string' do
      expect(clone(root_password_hash: hash).parameter(:root_password_hash).sensitive).to be true
    end
  end

  describe 'challenge_password' do
    it 'takes a Sensitive value' do
      expect(clone(challenge_password: sensitive('s3cret'))[:challenge_password]).to eq('s3cret')
    end

    it 'is always sensitive' do
      expect(clone(challenge_password: 's3cret').parameter(:challenge_password).sensitive).to be true
    end

    ['', "two\nlines", "tab\there", 'p' * 256, 'ä' * 128].each do |bad|
      it "refuses #{bad.inspect[0, 40]} without showing it" do
        expect {
          clone(challenge_password: bad)
        }.to raise_error(Puppet::ResourceError,
                         %r{challenge_password must be one line of 1 to 255 bytes without control characters.*\(not shown\)})
      end
    end

    it 'takes 255 bytes, as the helper does' do
      expect(clone(challenge_password: 'p' * 255)[:challenge_password]).to eq('p' * 255)
    end
  end

  it 'takes both from a catalog that marks them sensitive, without warning that parameters cannot be redacted' do
    expect(Puppet::Util::Log).not_to receive(:create).with(hash_including(level: :warning))
    resource = Puppet::Resource.new(:clone_army_clone, 'clone1',
                                    parameters: { root_password_hash: hash, challenge_password: 's3cret', base: 'debian-12' },
                                    sensitive_parameters: [:root_password_hash, :challenge_password])
    instance = described_class.new(resource)
    expect(instance.parameter(:root_password_hash).sensitive).to be true
    expect(instance.parameter(:challenge_password).sensitive).to be true
    expect(instance[:root_password_hash]).to eq(hash)
  end

  it 'still marks sensitive properties, as Puppet does' do
    resource = Puppet::Resource.new(:clone_army_clone, 'clone1',
                                    parameters: { server: 'puppet.example.com' }, sensitive_parameters: [:server])
    expect(described_class.new(resource).property(:server).sensitive).to be true
  end
end
