# frozen_string_literal: true

require 'spec_helper'

describe Puppet::Type.type(:clone_army_clone).provider(:clone_army) do
  include_context 'with a helper binary'

  let(:type) { Puppet::Type.type(:clone_army_clone) }

  def clone_resource(name, attributes = {})
    type.new({ name: name, helper: helper_path, provider: :clone_army }.merge(attributes))
  end

  # A provider as prefetch leaves it: found in `clone list`.
  def prefetched(resource, state, attributes = {})
    provider = described_class.new({ name: resource[:name], ensure: state, base: 'debian-12',
                                     master: 'puppet.example.com',
                                     certname: "#{resource[:name]}.loadhost.example.com" }.merge(attributes))
    resource.provider = provider
    provider
  end

  let(:full) do
    { base: 'debian-12', master: 'puppet.example.com', certname: 'clone3.loadhost.example.com' }
  end

  describe '.from_helper' do
    it 'reads a null master and certname as absent' do
      clone = JSON.parse(helper_fixture('clone_list.json'))['result']['clones'].first.merge('master' => nil, 'certname' => nil)
      expect(described_class.from_helper(clone)).to include(master: :absent, certname: :absent, ensure: :running)
    end
  end

  describe '.instances' do
    it 'lists every clone with one helper call' do
      allow(PuppetX::CloneArmy::Helper).to receive(:resolve_path).with(nil).and_return(helper_path)
      expect_helper(['clone', 'list'], 'clone_list.json')
      instances = described_class.instances
      expect(instances.map(&:name)).to eq(['clone1', 'clone2'])
      expect(instances.map(&:state)).to eq([:running, :stopped])
      expect(instances.first.base).to eq('debian-12')
      expect(instances.first.master).to eq('puppet.example.com')
      expect(instances.first.certname).to eq('clone1.loadhost.example.com')
    end

    it 'fails on a malformed listing instead of reporting no clones' do
      allow(PuppetX::CloneArmy::Helper).to receive(:resolve_path).with(nil).and_return(helper_path)
      expect_helper(['clone', 'list'], 'malformed.txt', 101)
      expect { described_class.instances }.to raise_error(Puppet::Error, %r{malformed answer})
    end
  end

  describe '.prefetch' do
    let(:resources) do
      {
        'clone1' => clone_resource('clone1', ensure: 'present'),
        'clone2' => clone_resource('clone2', ensure: 'running'),
        'clone3' => clone_resource('clone3', ensure: 'present'),
      }
    end

    it 'reads all clones with one helper call, using the resources\' helper' do
      expect_helper(['clone', 'list'], 'clone_list.json')
      described_class.prefetch(resources)
      expect(resources['clone1'].provider.state).to eq(:running)
      expect(resources['clone1'].provider.master).to eq('puppet.example.com')
      expect(resources['clone2'].provider.state).to eq(:stopped)
      expect(resources['clone3'].provider.state).to eq(:absent)
      expect(resources['clone3'].provider.exists?).to be false
    end

    it 'fails with the helper\'s error instead of taking every clone for absent' do
      expect_helper(['clone', 'list'], 'error_systemd.json', 1)
      expect { described_class.prefetch(resources) }.to raise_error(Puppet::Error, %r{\[systemd\]})
    end

    it 'fails on malformed JSON' do
      expect_helper(['clone', 'list'], 'truncated.json')
      expect { described_class.prefetch(resources) }.to raise_error(Puppet::Error, %r{not JSON})
    end
  end

  describe '#create' do
    it 'creates and starts a clone' do
      resource = clone_resource('clone3', full.merge(ensure: 'present'))
      expect_helper(['clone', 'create', '--base', 'debian-12', '--master', 'puppet.example.com',
                     '--certname', 'clone3.loadhost.example.com', '--start', '--', 'clone3'], 'clone_create.json')
      resource.provider.create(start: true)
      expect(resource.provider.state).to eq(:running)
    end

    it 'creates a clone without starting it' do
      resource = clone_resource('clone3', full.merge(ensure: 'stopped'))
      expect_helper(['clone', 'create', '--base', 'debian-12', '--master', 'puppet.example.com',
                     '--certname', 'clone3.loadhost.example.com', '--', 'clone3'], 'clone_create_stopped.json')
      resource.provider.create(start: false)
      expect(resource.provider.state).to eq(:stopped)
    end

    it 'says what is missing before calling the helper' do
      resource = clone_resource('clone3', ensure: 'present', base: 'debian-12')
      expect(Puppet::Util::Execution).not_to receive(:execute)
      expect { resource.provider.create(start: true) }
        .to raise_error(Puppet::Error, %r{cannot create clone clone3: master, certname not given})
    end

    it 'fails with the helper\'s kind and message' do
      resource = clone_resource('clone3', full.merge(base: 'debian-13'))
      expect_helper(['clone', 'create', '--base', 'debian-13', '--master', 'puppet.example.com',
                     '--certname', 'clone3.loadhost.example.com', '--start', '--', 'clone3'], 'error_not_found.json', 1)
      expect { resource.provider.create(start: true) }
        .to raise_error(Puppet::Error, %r{\[not-found\]: base "debian-13" does not exist})
    end
  end

  describe '#create with secrets' do
    let(:hash) { '$6$saltsalt$abcdefghijklmnopqrstuvwxyz./ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' }
    let(:resource) do
      clone_resource('clone3', full.merge(ensure: 'present', root_password_hash: hash, challenge_password: 's3cret'))
    end

    # Expects `clone create` with the two file flags; checks the files while
    # the helper "runs" and hands their paths to the example.
    def expect_create_with_secret_files(fixture, exitstatus = 0) # rubocop:disable Metrics/AbcSize
      seen = {}
      expect(Puppet::Util::Execution).to receive(:execute) do |argv, options|
        expect(options).to eq(failonfail: false, combine: false)
        hash_file = argv[argv.index('--root-password-hash-file') + 1]
        challenge_file = argv[argv.index('--challenge-password-file') + 1]
        expect(argv).to eq([helper_path, 'clone', 'create', '--base', 'debian-12', '--master', 'puppet.example.com',
                            '--certname', 'clone3.loadhost.example.com', '--root-password-hash-file', hash_file,
                            '--challenge-password-file', challenge_file, '--start', '--', 'clone3'])
        expect(argv.join(' ')).not_to include(hash, 's3cret')
        expect(File.read(hash_file)).to eq(hash)
        expect(File.read(challenge_file)).to eq('s3cret')
        [hash_file, challenge_file].each { |file| expect(File.stat(file).mode & 0o777).to eq(0o600) }
        expect(File.stat(File.dirname(hash_file)).mode & 0o777).to eq(0o700)
        expect(File.dirname(challenge_file)).to eq(File.dirname(hash_file))
        seen[:files] = [hash_file, challenge_file]
        helper_output(fixture, exitstatus)
      end
      seen
    end

    it 'passes them as files of mode 0600 in a private directory, and removes them afterwards' do
      seen = expect_create_with_secret_files('clone_create.json')
      resource.provider.create(start: true)
      expect(resource.provider.state).to eq(:running)
      expect(seen[:files].map { |file| File.exist?(file) }).to eq([false, false])
      expect(File.exist?(File.dirname(seen[:files].first))).to be false
    end

    it 'removes them when the helper fails too' do
      seen = expect_create_with_secret_files('error_not_found.json', 1)
      expect { resource.provider.create(start: true) }.to raise_error(Puppet::Error, %r{\[not-found\]})
      expect(File.exist?(File.dirname(seen[:files].first))).to be false
    end

    it 'passes only the flags of the secrets given' do
      resource = clone_resource('clone3', full.merge(ensure: 'stopped', challenge_password: 's3cret'))
      expect(Puppet::Util::Execution).to receive(:execute) do |argv, _options|
        expect(argv).not_to include('--root-password-hash-file')
        expect(argv[argv.index('--challenge-password-file') + 2]).to eq('--')
        helper_output('clone_create_stopped.json')
      end
      resource.provider.create(start: false)
    end

    it 'passes them again when a new base recreates the clone' do
      provider = prefetched(resource, :stopped, base: 'debian-11')
      provider.base = 'debian-12'
      expect_helper(['clone', 'remove', '--', 'clone3'], 'clone_remove.json')
      expect(Puppet::Util::Execution).to receive(:execute).ordered do |argv, _options|
        expect(argv).to include('--root-password-hash-file', '--challenge-password-file')
        expect(argv).not_to include('--start')
        helper_output('clone_create_stopped.json')
      end
      provider.flush
    end
  end

  describe '#destroy' do
    it 'removes the clone' do
      resource = clone_resource('clone1', ensure: 'absent')
      provider = prefetched(resource, :running)
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      provider.destroy
      expect(provider.state).to eq(:absent)
    end
  end

  describe '#start and #stop' do
    it 'starts a stopped clone' do
      resource = clone_resource('clone2', ensure: 'running')
      provider = prefetched(resource, :stopped)
      expect_helper(['clone', 'start', '--', 'clone2'], 'clone_start.json')
      provider.start
      expect(provider.state).to eq(:running)
    end

    it 'stops a running clone' do
      resource = clone_resource('clone1', ensure: 'stopped')
      provider = prefetched(resource, :running)
      expect_helper(['clone', 'stop', '--', 'clone1'], 'clone_stop.json')
      provider.stop
      expect(provider.state).to eq(:stopped)
    end

    it 're-points a clone before starting it' do
      resource = clone_resource('clone2', ensure: 'running', master: 'puppet2.example.com')
      provider = prefetched(resource, :stopped)
      provider.master = 'puppet2.example.com'
      expect_helper(['clone', 'configure', '--master', 'puppet2.example.com', '--', 'clone2'], 'clone_configure_clone2.json')
      expect_helper(['clone', 'start', '--', 'clone2'], 'clone_start.json')
      provider.start
    end

    it 'fails with the helper\'s error' do
      resource = clone_resource('clone2', ensure: 'running')
      provider = prefetched(resource, :stopped)
      expect_helper(['clone', 'start', '--', 'clone2'], 'error_systemd.json', 1)
      expect { provider.start }.to raise_error(Puppet::Error, %r{clone-army clone start -- clone2 failed \[systemd\]})
    end
  end

  describe '#restart' do
    it 'stops and starts the clone' do
      resource = clone_resource('clone2', ensure: 'present')
      provider = prefetched(resource, :running)
      expect_helper(['clone', 'stop', '--', 'clone2'], 'clone_stop_names_clone2.json')
      expect_helper(['clone', 'start', '--', 'clone2'], 'clone_start.json')
      provider.restart
      expect(provider.state).to eq(:running)
    end
  end

  describe '#flush' do
    it 'does nothing when nothing changed' do
      resource = clone_resource('clone1', ensure: 'present')
      provider = prefetched(resource, :running)
      expect(Puppet::Util::Execution).not_to receive(:execute)
      provider.flush
    end

    it 're-points master and certname with one configure call' do
      resource = clone_resource('clone1', ensure: 'present')
      provider = prefetched(resource, :running)
      provider.master = 'puppet2.example.com'
      provider.certname = 'c1.example.com'
      expect_helper(['clone', 'configure', '--master', 'puppet2.example.com', '--certname', 'c1.example.com', '--', 'clone1'],
                    'clone_configure.json')
      provider.flush
      expect(provider.master).to eq('puppet2.example.com')
      expect(provider.state).to eq(:running)
    end

    it 'recreates a running clone on a new base and starts it again' do
      resource = clone_resource('clone1', ensure: 'present', base: 'debian-13')
      provider = prefetched(resource, :running)
      provider.base = 'debian-13'
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      expect_helper(['clone', 'create', '--base', 'debian-13', '--master', 'puppet.example.com',
                     '--certname', 'clone1.loadhost.example.com', '--start', '--', 'clone1'], 'clone_create_name_clone1.json')
      provider.flush
      expect(provider.state).to eq(:running)
      expect(provider.base).to eq('debian-13')
    end

    it 'recreates a stopped clone stopped, with a new master as well' do
      resource = clone_resource('clone2', ensure: 'present', base: 'debian-13')
      provider = prefetched(resource, :stopped)
      provider.base = 'debian-13'
      provider.master = 'puppet2.example.com'
      expect_helper(['clone', 'remove', '--', 'clone2'], 'clone_remove.json')
      expect_helper(['clone', 'create', '--base', 'debian-13', '--master', 'puppet2.example.com',
                     '--certname', 'clone2.loadhost.example.com', '--', 'clone2'], 'clone_create_name_clone2.json')
      provider.flush
      expect(provider.state).to eq(:stopped)
      expect(provider.master).to eq('puppet2.example.com')
    end

    it 'cannot recreate a clone whose master is unknown' do
      resource = clone_resource('clone2', ensure: 'present', base: 'debian-13')
      provider = prefetched(resource, :stopped, master: :absent)
      provider.base = 'debian-13'
      expect(Puppet::Util::Execution).not_to receive(:execute)
      expect { provider.flush }.to raise_error(Puppet::Error, %r{cannot recreate clone clone2 on base debian-13: its master is unknown})
    end

    it 're-points a clone when the helper answers with its name only' do
      resource = clone_resource('clone1', ensure: 'present')
      provider = prefetched(resource, :running)
      provider.certname = 'c1.example.com'
      expect_helper(['clone', 'configure', '--certname', 'c1.example.com', '--', 'clone1'], 'clone_configure_name_clone1.json')
      provider.flush
      expect(provider.certname).to eq('c1.example.com')
      expect(provider.master).to eq('puppet.example.com')
    end

    it 'does nothing after the clone was destroyed' do
      resource = clone_resource('clone1', ensure: 'absent')
      provider = prefetched(resource, :running)
      provider.master = 'puppet2.example.com'
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      provider.destroy
      provider.flush
    end
  end

  describe 'a whole Puppet run' do
    # Through a real transaction: prefetch once, then each resource's changes.
    def apply(*resources)
      Puppet[:vardir] = @helper_dir
      catalog = Puppet::Resource::Catalog.new
      resources.each { |resource| catalog.add_resource(resource) }
      transaction = catalog.apply
      failed = transaction.report.resource_statuses.values.select(&:failed)
      expect(failed.map(&:resource)).to eq([])
      transaction
    end

    it 'uses one listing for many clones and leaves clones in sync alone' do
      expect_helper(['clone', 'list'], 'clone_list.json')
      transaction = apply(
        clone_resource('clone1', ensure: 'present', base: 'debian-12', master: 'puppet.example.com'),
        clone_resource('clone2', ensure: 'present', base: 'debian-12', master: 'puppet.example.com'),
      )
      expect(transaction.report.resource_statuses.values.map(&:changed)).to eq([false, false])
    end

    it 're-points and starts a stopped clone in one run' do
      expect_helper(['clone', 'list'], 'clone_list.json')
      expect_helper(['clone', 'configure', '--master', 'puppet2.example.com', '--', 'clone2'], 'clone_configure_clone2.json')
      expect_helper(['clone', 'start', '--', 'clone2'], 'clone_start.json')
      transaction = apply(clone_resource('clone2', ensure: 'running', master: 'puppet2.example.com'))
      expect(transaction.report.resource_statuses['Clone_army_clone[clone2]'].changed).to be true
    end

    def notifying(target)
      Puppet::Type.type(:notify).new(name: 'config changed', notify: target.to_s)
    end

    it 'restarts a running clone when notified' do
      clone1 = clone_resource('clone1', ensure: 'present')
      expect_helper(['clone', 'list'], 'clone_list.json')
      expect_helper(['clone', 'stop', '--', 'clone1'], 'clone_stop.json')
      expect_helper(['clone', 'start', '--', 'clone1'], 'clone_start_clone1.json')
      apply(notifying(clone1.ref), clone1)
    end

    it 'leaves a stopped clone stopped when notified' do
      clone2 = clone_resource('clone2', ensure: 'present')
      expect_helper(['clone', 'list'], 'clone_list.json')
      apply(notifying(clone2.ref), clone2)
    end

    it 'starts a notified stopped clone only once' do
      clone2 = clone_resource('clone2', ensure: 'running')
      expect_helper(['clone', 'list'], 'clone_list.json')
      expect_helper(['clone', 'start', '--', 'clone2'], 'clone_start.json')
      apply(notifying(clone2.ref), clone2)
    end

    it 'recreates a running clone on a new base in one run, running again' do
      expect_helper(['clone', 'list'], 'clone_list.json')
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      expect_helper(['clone', 'create', '--base', 'debian-13', '--master', 'puppet.example.com',
                     '--certname', 'clone1.loadhost.example.com', '--start', '--', 'clone1'], 'clone_create_name_clone1.json')
      apply(clone_resource('clone1', ensure: 'present', base: 'debian-13'))
    end

    it 'recreates a running clone on a new base stopped when it is to be stopped, without another stop' do
      expect_helper(['clone', 'list'], 'clone_list.json')
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      expect_helper(['clone', 'create', '--base', 'debian-13', '--master', 'puppet.example.com',
                     '--certname', 'clone1.loadhost.example.com', '--', 'clone1'], 'clone_create_name_clone1.json')
      apply(clone_resource('clone1', ensure: 'stopped', base: 'debian-13'))
    end

    it 'removes a clone' do
      expect_helper(['clone', 'list'], 'clone_list.json')
      expect_helper(['clone', 'remove', '--', 'clone2'], 'clone_remove.json')
      apply(clone_resource('clone2', ensure: 'absent', base: 'debian-12', master: 'puppet2.example.com'))
    end

    it 'creates a missing clone and starts it once' do
      expect_helper(['clone', 'list'], 'clone_list.json')
      expect_helper(['clone', 'create', '--base', 'debian-12', '--master', 'puppet.example.com',
                     '--certname', 'clone3.loadhost.example.com', '--start', '--', 'clone3'], 'clone_create.json')
      apply(clone_resource('clone3', full.merge(ensure: 'present')))
    end
  end
end
