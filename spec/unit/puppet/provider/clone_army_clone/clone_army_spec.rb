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
                                     server: 'puppet.example.com',
                                     certname: "#{resource[:name]}.loadhost.example.com" }.merge(attributes))
    resource.provider = provider
    provider
  end

  # `clone create`'s arguments for clone3 (or `name`) with the full set of
  # attributes, `extra` before the name.
  def create_args(name = 'clone3', extra = [])
    ['--base', 'debian-12', '--server', 'puppet.example.com', '--certname', "#{name}.loadhost.example.com", *extra, '--', name]
  end

  # Expects one `clone create-many` whose batch file holds `lines` (each one
  # clone's `clone create` arguments; nil: any), checks the file (mode 0600
  # in a private directory) and yields the lines to `check` while the helper
  # "runs", then answers `fixture` (or the document `answer`).
  def expect_create_many(lines, fixture = 'generated/clone_create_many_clone3.json', exitstatus = 0, answer: nil, &check)
    expect(PuppetX::CloneArmy::Runner).to receive(:run).once.ordered do |argv, options|
      expect(argv.take(3)).to eq([helper_path, 'clone', 'create-many'])
      expect(options).to eq(timeout: PuppetX::CloneArmy::Helper.timeout_for(['clone', 'create-many']))
      parsed = batch_lines(argv.drop(3))
      expect(parsed).to eq(lines) if lines
      check&.call(parsed)
      answer ? PuppetX::CloneArmy::Runner::Result.new(answer.to_json, '', 0) : helper_output(fixture, exitstatus)
    end
  end

  # Expects the one `base list` a create asks before anything is written,
  # answering debian-12 (and `more` bases).
  def expect_base_list(*more)
    document = JSON.parse(helper_fixture('base_list.json'))
    bases = document['result']['bases']
    more.each { |name| bases << bases.first.merge('name' => name) }
    expect(PuppetX::CloneArmy::Runner).to receive(:run)
      .with([helper_path, 'base', 'list', '--format', 'json'], timeout: PuppetX::CloneArmy::Helper.timeout_for(['base', 'list']))
      .once.ordered.and_return(PuppetX::CloneArmy::Runner::Result.new(document.to_json, '', 0))
  end

  # The lines of the one batch file in `files`, checked to be private.
  def batch_lines(files)
    expect(files.size).to eq(1)
    expect_private(files)
    File.read(files.first).lines.map { |line| JSON.parse(line) }
  end

  # Each of `files` is of mode 0600, in one directory of mode 0700.
  def expect_private(files)
    files.each { |file| expect(File.stat(file).mode & 0o777).to eq(0o600) }
    expect(files.map { |file| File.dirname(file) }.uniq.size).to eq(1)
    expect(File.stat(File.dirname(files.first)).mode & 0o777).to eq(0o700)
  end

  # The batch of clones to create, start, restart and remove lives on the provider class.
  before(:each) do
    described_class.instance_variable_set(:@batch, nil)
  end

  let(:full) do
    { base: 'debian-12', server: 'puppet.example.com', certname: 'clone3.loadhost.example.com' }
  end

  describe '.from_helper' do
    it 'reads a null server, server port and certname as absent' do
      clone = JSON.parse(helper_fixture('clone_list.json'))['result']['clones'].first.merge('server' => nil, 'certname' => nil)
      expect(described_class.from_helper(clone)).to include(server: :absent, server_port: :absent, certname: :absent,
                                                            ensure: :running)
      expect(described_class.from_helper(clone.merge('server_port' => 8141))).to include(server_port: 8141)
    end

    it 'reads a clone the helper calls incomplete as :incomplete, which does not exist yet' do
      clone = JSON.parse(helper_fixture('clone_list.json'))['result']['clones'].first.merge(
        'state' => 'stopped',
        'problems' => [{ 'kind' => 'incomplete', 'message' => 'killed half-way', 'fix' => 'clone-army clone create ...' }],
      )
      provider = described_class.new(described_class.from_helper(clone))
      expect(provider.state).to eq(:incomplete)
      expect(provider.exists?).to be(false)
    end
  end

  describe 'an incomplete clone' do
    it 'is created again (which finishes it) for ensure => present' do
      resource = clone_resource('clone3', full.merge(ensure: 'present'))
      prefetched(resource, :incomplete)
      expect(resource.property(:ensure).insync?(:incomplete)).to be(false)
      expect_base_list
      expect_create_many([create_args])
      resource.property(:ensure).sync
      expect(resource.provider.state).to eq(:stopped)
      expect(described_class.batch.starts).to eq([[resource.provider, 0]])
      expect_helper(['clone', 'start', '--', 'clone3'], 'clone_start_clone3.json')
      described_class.post_resource_eval
      expect(resource.provider.state).to eq(:running)
    end

    it 'is removed for ensure => absent' do
      resource = clone_resource('clone3', ensure: 'absent')
      prefetched(resource, :incomplete)
      expect(resource.property(:ensure).insync?(:incomplete)).to be(false)
      resource.property(:ensure).sync
      expect(resource.provider.state).to eq(:absent)
      # Removals are batched: the helper call comes after all clones are evaluated.
      expect(described_class.batch.removals).to eq([resource.provider])
      expect_helper(['clone', 'remove', '--', 'clone3'], 'clone_remove.json')
      described_class.post_resource_eval
    end
  end

  describe '.instances' do
    it 'lists every clone with one helper call' do
      allow(PuppetX::CloneArmy::Helper).to receive(:resolve_path).with(nil).and_return(helper_path)
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      instances = described_class.instances
      expect(instances.map(&:name)).to eq(['clone1', 'clone2'])
      expect(instances.map(&:state)).to eq([:running, :stopped])
      expect(instances.first.base).to eq('debian-12')
      expect(instances.first.server).to eq('puppet.example.com')
      expect(instances.first.certname).to eq('clone1.loadhost.example.com')
    end

    it 'fails on a malformed listing instead of reporting no clones' do
      allow(PuppetX::CloneArmy::Helper).to receive(:resolve_path).with(nil).and_return(helper_path)
      expect_helper(['clone', 'list', '--format', 'json'], 'malformed.txt', 101)
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
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      described_class.prefetch(resources)
      expect(resources['clone1'].provider.state).to eq(:running)
      expect(resources['clone1'].provider.server).to eq('puppet.example.com')
      expect(resources['clone2'].provider.state).to eq(:stopped)
      expect(resources['clone3'].provider.state).to eq(:absent)
      expect(resources['clone3'].provider.exists?).to be false
    end

    it 'fails with the helper\'s error instead of taking every clone for absent' do
      expect_helper(['clone', 'list', '--format', 'json'], 'error_systemd.json', 1)
      expect { described_class.prefetch(resources) }.to raise_error(Puppet::Error, %r{\[systemd\]})
    end

    it 'fails on malformed JSON' do
      expect_helper(['clone', 'list', '--format', 'json'], 'truncated.json')
      expect { described_class.prefetch(resources) }.to raise_error(Puppet::Error, %r{not JSON})
    end
  end

  describe '#create' do
    it 'creates a clone at once and queues it to be started after all clones are evaluated' do
      resource = clone_resource('clone3', full.merge(ensure: 'present'))
      expect_base_list
      expect_create_many([create_args]) { expect(resource.provider.state).to eq(:absent) }
      resource.provider.create(start: true)
      expect(resource.provider.state).to eq(:stopped)
      expect(described_class.batch.starts).to eq([[resource.provider, 0]])
      expect_helper(['clone', 'start', '--', 'clone3'], 'clone_start_clone3.json')
      described_class.post_resource_eval
      expect(resource.provider.state).to eq(:running)
      expect(described_class.batch.starts).to eq([])
    end

    it 'creates a clone without starting it' do
      resource = clone_resource('clone3', full.merge(ensure: 'stopped'))
      expect_base_list
      expect_create_many([create_args])
      resource.provider.create(start: false)
      expect(described_class.batch.starts).to eq([])
      described_class.post_resource_eval
      expect(resource.provider.state).to eq(:stopped)
    end

    it 'creates a masterless clone in apply mode without --server' do
      resource = clone_resource('clone3', ensure: 'stopped', base: 'debian-12', certname: 'clone3.loadhost.example.com',
                                          run_mode: 'apply', apply_source: '/srv/clone-army-apply')
      expect_base_list
      expect_create_many([['--base', 'debian-12', '--certname', 'clone3.loadhost.example.com',
                           '--run-mode', 'apply', '--apply-source', '/srv/clone-army-apply', '--', 'clone3']])
      resource.provider.create(start: false)
      described_class.post_resource_eval
      expect(resource.provider.state).to eq(:stopped)
    end

    it 'says that the base is missing before calling the helper' do
      resource = clone_resource('clone3', ensure: 'present', server: 'puppet.example.com')
      expect(PuppetX::CloneArmy::Runner).not_to receive(:run)
      expect { resource.provider.create(start: true) }
        .to raise_error(Puppet::Error, %r{cannot create clone clone3: base not given})
    end

    # `puppet resource clone_army_clone test1 ensure=running base=debian-12`
    it "gives a clone made without server and certname the host agent's server and a certname under the host's" do
      Puppet[:server] = 'puppet'
      Puppet[:server_list] = ''
      Puppet[:certname] = 'loadhost.example.com'
      resource = clone_resource('clone3', ensure: 'stopped', base: 'debian-12')
      expect_base_list
      expect_create_many([['--base', 'debian-12', '--server', 'puppet', '--certname', 'clone3.loadhost.example.com', '--', 'clone3']])
      resource.provider.create(start: false)
      described_class.post_resource_eval
    end

    it "gives a clone made without server the host agent's port with its server, when that is not 8140" do
      Puppet[:server_list] = 'compile1.example.com:8141'
      Puppet[:certname] = 'loadhost.example.com'
      resource = clone_resource('clone3', ensure: 'stopped', base: 'debian-12')
      expect_base_list
      expect_create_many([['--base', 'debian-12', '--server', 'compile1.example.com', '--server-port', '8141',
                           '--certname', 'clone3.loadhost.example.com', '--', 'clone3']])
      resource.provider.create(start: false)
      described_class.post_resource_eval
    end

    it "keeps the host agent's port away from a server given, which has its own" do
      Puppet[:server_list] = 'compile1.example.com:8141'
      resource = clone_resource('clone3', full.merge(ensure: 'stopped'))
      expect_base_list
      expect_create_many([['--base', 'debian-12', '--server', 'puppet.example.com',
                           '--certname', 'clone3.loadhost.example.com', '--', 'clone3']])
      resource.provider.create(start: false)
      described_class.post_resource_eval
      resource = clone_resource('clone3', full.merge(ensure: 'stopped', server_port: 8142))
      expect_base_list
      expect_create_many([['--base', 'debian-12', '--server', 'puppet.example.com', '--server-port', '8142',
                           '--certname', 'clone3.loadhost.example.com', '--', 'clone3']])
      resource.provider.create(start: false)
      described_class.post_resource_eval
    end

    it 'fails with the helper\'s kind and message, in the create, and starts nothing' do
      resource = clone_resource('clone3', full.merge(base: 'debian-13'))
      expect_base_list('debian-13')
      # The batch, then the clone on its own: both refused.
      2.times do
        expect_create_many([['--base', 'debian-13', *create_args.drop(2)]], 'error_not_found.json', 1)
      end
      expect { resource.provider.create(start: true) }
        .to raise_error(Puppet::Error, %r{\[not-found\]: base "debian-13" does not exist})
      expect(described_class.batch.starts).to eq([])
      described_class.post_resource_eval
    end

    it 'makes the clones of a catalog with one call at the first create, each create taking its own outcome' do
      catalog = Puppet::Resource::Catalog.new
      resources = ['clone1', 'clone2', 'clone3'].map do |name|
        catalog.add_resource(clone_resource(name, full.merge(ensure: 'stopped', certname: "#{name}.loadhost.example.com")))
        catalog.resource("Clone_army_clone[#{name}]")
      end
      expect_base_list
      expect_create_many(['clone1', 'clone2', 'clone3'].map { |name| create_args(name) },
                         'generated/clone_create_many_clone1_clone2_clone3.json')
      resources.each { |resource| resource.provider.create(start: false) }
      described_class.post_resource_eval
      expect(resources.map { |resource| resource.provider.state }).to eq([:stopped, :stopped, :stopped])
    end

    it 'a_clone_in_noop_or_to_be_removed_is_not_made_ahead' do
      catalog = Puppet::Resource::Catalog.new
      catalog.add_resource(clone_resource('clone1', full.merge(ensure: 'stopped', certname: 'clone1.loadhost.example.com')))
      catalog.add_resource(clone_resource('clone2', full.merge(ensure: 'stopped', noop: true)))
      catalog.add_resource(clone_resource('clone3', full.merge(ensure: 'absent')))
      expect_base_list
      expect_create_many([create_args('clone1')], 'generated/clone_create_many_clone1_clone2_clone3.json')
      catalog.resource('Clone_army_clone[clone1]').provider.create(start: false)
      described_class.post_resource_eval
    end
  end

  # A run as Puppet makes it: prefetch, each clone evaluated in order, then
  # post_resource_eval; what each resource's status in the report says.
  describe 'a create that fails, in a Puppet run' do
    # Applies `resources` as one catalog, after a `clone list` that finds
    # none of them; returns the transaction's report.
    def apply(*resources)
      catalog = Puppet::Resource::Catalog.new
      resources.each { |resource| catalog.add_resource(resource) }
      catalog.apply.report
    end

    def status_of(report, name)
      report.resource_statuses["Clone_army_clone[#{name}]"]
    end

    def events_of(report, name)
      status_of(report, name).events.map { |event| [event.status, event.message] }
    end

    before(:each) do
      # Where a run keeps its state (puppetlabs_spec_helper points it at /dev/null).
      Puppet[:vardir] = File.join(@helper_dir, 'var')
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list_empty.json')
    end

    it 'a_clone_on_a_missing_base_fails_its_own_resource_before_any_helper_call_that_writes' do
      expect_helper(['base', 'list', '--format', 'json'], 'base_list.json')
      report = apply(clone_resource('clonex', full.merge(ensure: 'present', base: 'no-such-base')))
      expect(status_of(report, 'clonex').failed).to be(true)
      expect(events_of(report, 'clonex')).to eq([['failure', "change from 'absent' to 'present' failed: cannot create clone " \
                                                             'clonex: base "no-such-base" does not exist (there are debian-12; ' \
                                                             'a clone_army_base resource of that name builds it)']])
      expect(report.exit_status & 4).to eq(4)
      expect(report.logs.map(&:message).grep(%r{created})).to eq([])
    end

    it 'a_clone_the_helper_refuses_to_make_fails_its_own_resource_and_not_its_siblings' do
      resources = ['clone1', 'clone2', 'clone3'].map do |name|
        clone_resource(name, full.merge(ensure: 'stopped', certname: "#{name}.loadhost.example.com"))
      end
      expect_helper(['base', 'list', '--format', 'json'], 'base_list.json')
      # All three with one call at the first clone's create, then each on its own.
      expect_create_many(['clone1', 'clone2', 'clone3'].map { |name| create_args(name) }, 'error_systemd.json', 1)
      expect_create_many([create_args('clone1')], 'generated/clone_create_many_clone1_clone2_clone3.json')
      expect_create_many([create_args('clone2')], 'error_systemd.json', 1)
      expect_create_many([create_args('clone3')], 'generated/clone_create_many_clone3.json')
      report = apply(*resources)
      expect(['clone1', 'clone2', 'clone3'].map { |name| status_of(report, name).failed }).to eq([false, true, false])
      expect(events_of(report, 'clone2').first).to match(['failure', %r{change from 'absent' to 'stopped' failed: .*\[systemd\]}])
      expect(events_of(report, 'clone1')).to eq([['success', 'created (left stopped)']])
      expect(report.logs.map(&:message).grep(%r{created}).size).to eq(2)
      expect(report.exit_status & 4).to eq(4)
    end

    it 'a_clone_made_ahead_for_a_resource_puppet_then_skips_is_removed_at_the_end_of_the_run' do
      good = clone_resource('clone1', full.merge(ensure: 'stopped', certname: 'clone1.loadhost.example.com'))
      bad = clone_resource('clonex', full.merge(ensure: 'stopped', base: 'no-such-base'))
      skipped = clone_resource('clone2', full.merge(ensure: 'stopped', certname: 'clone2.loadhost.example.com',
                                                    require: 'Clone_army_clone[clonex]'))
      expect_helper(['base', 'list', '--format', 'json'], 'base_list.json')
      expect_create_many([create_args('clone1'), create_args('clone2')], 'generated/clone_create_many_clone1_clone2_clone3.json')
      # clonex's own create lists the bases again (its base could have been built since).
      expect_helper(['base', 'list', '--format', 'json'], 'base_list.json')
      expect_helper(['clone', 'remove', '--', 'clone2'], 'clone_remove.json')
      report = apply(good, bad, skipped)
      expect(['clone1', 'clonex', 'clone2'].map { |name| status_of(report, name).failed }).to eq([false, true, false])
      expect(status_of(report, 'clone2').skipped).to be(true)
    end
  end

  describe '#create with secrets' do
    let(:hash) { '$6$saltsalt$abcdefghijklmnopqrstuvwxyz./ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' }
    let(:resource) do
      clone_resource('clone3', full.merge(ensure: 'present', root_password_hash: hash, challenge_password: 's3cret'))
    end

    # Expects `clone create-many` with the two file flags in the clone's
    # line; checks the files while the helper "runs" and hands their paths to
    # the example.
    def expect_create_with_secret_files(fixture, exitstatus = 0)
      seen = {}
      expect_base_list
      expect_create_many(nil, fixture, exitstatus) do |lines|
        hash_file = lines[0][lines[0].index('--root-password-hash-file') + 1]
        challenge_file = lines[0][lines[0].index('--challenge-password-file') + 1]
        expect(lines).to eq([create_args('clone3', ['--root-password-hash-file', hash_file,
                                                    '--challenge-password-file', challenge_file])])
        expect(File.read(hash_file)).to eq(hash)
        expect(File.read(challenge_file)).to eq('s3cret')
        expect_private([hash_file, challenge_file])
        seen[:files] = [hash_file, challenge_file]
      end
      seen
    end

    it 'passes them as files of mode 0600 in a private directory, and removes them afterwards' do
      seen = expect_create_with_secret_files('generated/clone_create_many_clone3.json')
      resource.provider.create(start: false)
      described_class.post_resource_eval
      expect(seen[:files].map { |file| File.exist?(file) }).to eq([false, false])
      expect(File.exist?(File.dirname(seen[:files].first))).to be false
    end

    it 'removes them when the helper fails too' do
      seen = expect_create_with_secret_files('error_not_found.json', 1)
      expect_create_many(nil, 'error_not_found.json', 1)
      expect { resource.provider.create(start: true) }.to raise_error(Puppet::Error, %r{\[not-found\]})
      expect(File.exist?(File.dirname(seen[:files].first))).to be false
    end

    it 'passes only the flags of the secrets given' do
      resource = clone_resource('clone3', full.merge(ensure: 'stopped', challenge_password: 's3cret'))
      expect_base_list
      expect_create_many(nil) do |lines|
        expect(lines[0]).not_to include('--root-password-hash-file')
        expect(lines[0][lines[0].index('--challenge-password-file') + 2]).to eq('--')
      end
      resource.provider.create(start: false)
      described_class.post_resource_eval
    end

    it 'passes them again when a new base recreates the clone' do
      provider = prefetched(resource, :stopped, base: 'debian-11')
      provider.base = 'debian-12'
      expect_helper(['clone', 'remove', '--', 'clone3'], 'clone_remove.json')
      expect(PuppetX::CloneArmy::Runner).to receive(:run).ordered do |argv, _options|
        expect(argv).to include('--root-password-hash-file', '--challenge-password-file')
        expect(argv).not_to include('--start')
        helper_output('clone_create_stopped.json')
      end
      provider.flush
    end
  end

  describe 'load shape' do
    let(:listed) { JSON.parse(helper_fixture('clone_list_shape.json'))['result']['clones'] }

    it 'reads it from clone list, nulls as none or absent' do
      expect(described_class.from_helper(listed[0])).to include(
        run_mode: :timer, runinterval: 1800, splay: 0, phase_index: 0, phase_count: 2, phasing: :'prefix-even', memory_max: '1G',
        cpu_quota: '50%', tasks_max: 4096, facts: { 'role' => 'web', 'tier' => 3 }, generated_facts: 500, churn_percent: 15
      )
      expect(described_class.from_helper(listed[1])).to include(
        run_mode: :manual, runinterval: :absent, splay: :absent, phase_index: :absent, phase_count: :absent, phasing: :absent,
        memory_max: 'none', cpu_quota: 'none', tasks_max: 'none', facts: {}, generated_facts: 0, churn_percent: :absent,
        apply_source: :absent
      )
    end

    it 'takes a clone of an older helper, without the fields, as having no shape' do
      clone = JSON.parse(helper_fixture('clone_list.json'))['result']['clones'].first
      expect(described_class.from_helper(clone)).to include(run_mode: :absent, runinterval: :absent, phasing: :absent, memory_max: 'none',
                                                            facts: {})
      # No noop in an older helper: its clones run for real.
      expect(described_class.from_helper(clone)).to include(agent_noop: :false)
    end

    it 'reads agent_noop as the helper reads it back' do
      expect(described_class.from_helper(listed[0].merge('agent_noop' => true))).to include(agent_noop: :true)
      expect(described_class.from_helper(listed[0].merge('agent_noop' => false))).to include(agent_noop: :false)
    end

    describe 'on create' do
      let(:shaped) do
        full.merge(ensure: 'stopped', run_mode: 'timer', runinterval: 1800, splay: 60, phase_index: 2, phase_count: 10,
                   phasing: 'fleet-even', memory_max: '512M', cpu_quota: 50, tasks_max: 512, facts: { 'role' => 'web' },
                   generated_facts: 500, churn_percent: 15)
      end

      it 'passes every setting as a flag, the facts in a 0600 file removed afterwards' do
        resource = clone_resource('clone3', shaped)
        seen = {}
        # The batch's answer with the clone as the helper describes it with that shape.
        answer = JSON.parse(helper_fixture('generated/clone_create_many_clone3.json'))
        answer['result']['clones'][0]['clone'] = JSON.parse(helper_fixture('clone_create_shape.json'))['result']['clone']
        expect_base_list
        expect_create_many(nil, answer: answer) do |lines|
          facts_file = lines[0][lines[0].index('--facts-file') + 1]
          expect(lines).to eq([create_args('clone3', ['--run-mode', 'timer', '--runinterval', '1800',
                                                      '--splay', '60', '--phase-index', '2', '--phase-count', '10',
                                                      '--phasing', 'fleet-even', '--memory-max', '512M',
                                                      '--cpu-quota', '50%', '--tasks-max', '512', '--facts-file', facts_file,
                                                      '--generated-facts', '500', '--churn-percent', '15'])])
          expect(JSON.parse(File.read(facts_file))).to eq('role' => 'web')
          expect(File.stat(facts_file).mode & 0o777).to eq(0o600)
          expect(File.stat(File.dirname(facts_file)).mode & 0o777).to eq(0o700)
          seen[:file] = facts_file
        end
        resource.provider.create(start: false)
        described_class.post_resource_eval
        expect(File.exist?(File.dirname(seen[:file]))).to be false
        expect(resource.provider.run_mode).to eq(:timer)
        expect(resource.provider.phase_index).to eq(2)
        expect(resource.provider.phasing).to eq(:'fleet-even')
      end

      it 'makes a twin from its node\'s imported record' do
        resource = clone_resource('clone3', full.merge(ensure: 'stopped', twin: 'web01.example.com'))
        expect_base_list
        args = create_args('clone3', [])
        args.insert(args.index('--certname') + 2, '--twin-file', '/var/lib/puppet-clone-army/.twins/web01.example.com.json')
        expect_create_many([args])
        resource.provider.create(start: false)
        described_class.post_resource_eval
      end

      it 'passes agent_noop as the flag the helper takes' do
        resource = clone_resource('clone3', full.merge(ensure: 'stopped', agent_noop: true))
        expect_base_list
        expect_create_many([create_args('clone3', ['--agent-noop', 'true'])])
        resource.provider.create(start: false)
        described_class.post_resource_eval
      end

      it 'passes only the flags of the settings given' do
        resource = clone_resource('clone3', full.merge(ensure: 'stopped', run_mode: 'manual', tasks_max: 'none'))
        expect_base_list
        expect_create_many([create_args('clone3', ['--run-mode', 'manual', '--tasks-max', 'none'])])
        resource.provider.create(start: false)
        described_class.post_resource_eval
      end
    end

    describe 'on change' do
      let(:resource) { clone_resource('clone1', ensure: 'present') }
      let(:provider) { described_class.new(described_class.from_helper(listed[0])).tap { |p| resource.provider = p } }

      it 'sets only the changed settings with one configure call' do
        provider.runinterval = 900
        provider.memory_max = '512M'
        expect_helper(['clone', 'configure', '--runinterval', '900', '--memory-max', '512M', '--', 'clone1'],
                      'clone_configure_shape.json')
        provider.flush
        expect(provider.runinterval).to eq(900)
        expect(provider.memory_max).to eq('512M')
      end

      it 'passes the phase as a pair, the other half as it is' do
        provider.phase_index = 1
        expect_helper(['clone', 'configure', '--phase-index', '1', '--phase-count', '2', '--', 'clone1'],
                      'clone_configure_shape.json')
        provider.flush
      end

      it 'passes a new phasing alone, the phase as it is' do
        provider.phasing = :'fleet-even'
        expect_helper(['clone', 'configure', '--phasing', 'fleet-even', '--', 'clone1'], 'clone_configure_shape.json')
        provider.flush
      end

      it 'puts the agent in noop and out of it without a restart' do
        provider.agent_noop = :true
        expect_helper(['clone', 'configure', '--agent-noop', 'true', '--', 'clone1'], 'clone_configure_shape.json')
        provider.flush
        expect(described_class.batch.restarting?(provider)).to be false
        provider.agent_noop = :false
        expect_helper(['clone', 'configure', '--agent-noop', 'false', '--', 'clone1'], 'clone_configure_shape.json')
        provider.flush
      end

      it 'switches to apply mode with its source in one call' do
        provider.run_mode = :apply
        provider.apply_source = '/srv/clone-army-apply'
        expect_helper(['clone', 'configure', '--run-mode', 'apply', '--apply-source', '/srv/clone-army-apply', '--', 'clone1'],
                      'clone_configure_shape.json')
        provider.flush
      end

      it 'passes server with the shape in the same call' do
        provider.server = 'puppet2.example.com'
        provider.run_mode = :daemon
        expect_helper(['clone', 'configure', '--server', 'puppet2.example.com', '--run-mode', 'daemon', '--', 'clone1'],
                      'clone_configure.json')
        provider.flush
      end

      it 'writes new facts to a private file that is removed, also when the helper fails' do
        provider.facts = { 'role' => 'db' }
        seen = {}
        expect(PuppetX::CloneArmy::Runner).to receive(:run) do |argv, _options|
          facts_file = argv[argv.index('--facts-file') + 1]
          expect(argv).to eq([helper_path, 'clone', 'configure', '--facts-file', facts_file, '--', 'clone1'])
          expect(File.read(facts_file)).to eq('{"role":"db"}')
          expect(File.stat(facts_file).mode & 0o777).to eq(0o600)
          seen[:file] = facts_file
          helper_output('error_systemd.json', 1)
        end
        expect { provider.flush }.to raise_error(Puppet::Error, %r{\[systemd\]})
        expect(File.exist?(seen[:file])).to be false
        expect(File.exist?(File.dirname(seen[:file]))).to be false
      end

      it 'makes the clone the twin of a node with its new certname in one call, restarting it for the certname' do
        provider.certname = 'clone1.web01.loadhost.example.com'
        provider.twin = 'web01.example.com'
        expect_helper(['clone', 'configure', '--certname', 'clone1.web01.loadhost.example.com',
                       '--twin-file', '/var/lib/puppet-clone-army/.twins/web01.example.com.json', '--', 'clone1'],
                      'clone_configure.json')
        provider.flush
      end

      it 'creates a twin made a plain clone anew, without its node' do
        provider.instance_variable_get(:@property_hash)[:twin] = 'web01.example.com'
        provider.twin = :absent
        expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
        expect(PuppetX::CloneArmy::Runner).to receive(:run).ordered do |argv, _options|
          expect(argv).not_to include('--twin-file')
          expect(argv.take(4)).to eq([helper_path, 'clone', 'create', '--base'])
          helper_output('generated/clone_create_clone1.json')
        end
        provider.flush
      end

      it 'keeps the shape when a new base recreates the clone' do
        provider.base = 'debian-13'
        expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
        expect(PuppetX::CloneArmy::Runner).to receive(:run).ordered do |argv, _options|
          facts_file = argv[argv.index('--facts-file') + 1]
          expect(argv).to eq([helper_path, 'clone', 'create', '--base', 'debian-13', '--server', 'puppet.example.com',
                              '--certname', 'clone1.loadhost.example.com', '--run-mode', 'timer', '--phase-index', '0',
                              '--phase-count', '2', '--memory-max', '1G', '--cpu-quota', '50%', '--tasks-max', '4096',
                              '--facts-file', facts_file, '--generated-facts', '500', '--churn-percent', '15', '--', 'clone1'])
          helper_output('generated/clone_create_clone1.json')
        end
        provider.flush
        expect(described_class.batch.starts.map(&:first)).to eq([provider])
      end
    end
  end

  describe '.post_resource_eval' do
    def queued(name, ramp_up)
      resource = clone_resource(name, full.merge(certname: "#{name}.loadhost.example.com", ramp_up: ramp_up))
      provider = described_class.new(name: name, ensure: :stopped)
      resource.provider = provider
      described_class.batch.start(provider, ramp_up)
      provider
    end

    it 'does nothing when no clone was created' do
      expect(PuppetX::CloneArmy::Runner).not_to receive(:run)
      described_class.post_resource_eval
    end

    it 'starts all queued clones with one call without ramp_up' do
      providers = ['clone1', 'clone2', 'clone3'].map { |name| queued(name, 0) }
      expect_helper(['clone', 'start', '--', 'clone1', 'clone2', 'clone3'], 'generated/clone_start_clone1_clone2_clone3.json')
      described_class.post_resource_eval
      expect(providers.map(&:state)).to eq([:running, :running, :running])
    end

    it 'leaves the waves over the largest ramp_up to the helper' do
      providers = ['clone1', 'clone2', 'clone3'].map { |name| queued(name, name == 'clone2' ? 10 : 0) }
      expect_helper(['clone', 'start', '--ramp-up', '10', '--', 'clone1', 'clone2', 'clone3'],
                    'generated/clone_start_clone1_clone2_clone3.json')
      described_class.post_resource_eval
      expect(providers.map(&:state)).to eq([:running, :running, :running])
      expect(described_class.batch.starts).to eq([])
    end

    describe 'when a start fails' do
      let(:providers) { ['clone1', 'clone2'].map { |name| queued(name, 0) } }

      def expect_wave_failure
        expect_helper(['clone', 'start', '--', 'clone1', 'clone2'], 'error_systemd.json', 1)
        expect_helper(['clone', 'start', '--', 'clone1'], 'clone_start_clone1.json')
        expect_helper(['clone', 'start', '--', 'clone2'], 'error_systemd.json', 1)
      end

      it 'starts the wave\'s clones one by one and fails the run for the one that failed' do
        providers
        expect_wave_failure
        expect { described_class.post_resource_eval }
          .to raise_error(Puppet::Error, %r{Could not start clone clone2: clone-army clone start -- clone2 failed \[systemd\]})
        expect(providers.map(&:state)).to eq([:running, :stopped])
      end

      it 'tries every clone before failing' do
        providers << queued('clone3', 10)
        expect_helper(['clone', 'start', '--ramp-up', '10', '--', 'clone1', 'clone2', 'clone3'], 'error_systemd.json', 1)
        expect_helper(['clone', 'start', '--', 'clone1'], 'error_systemd.json', 1)
        expect_helper(['clone', 'start', '--', 'clone2'], 'error_systemd.json', 1)
        expect_helper(['clone', 'start', '--', 'clone3'], 'clone_start_clone3.json')
        expect { described_class.post_resource_eval }
          .to raise_error(Puppet::Error, %r{Could not start clone clone1: .*; Could not start clone clone2: })
        expect(providers.map(&:state)).to eq([:stopped, :stopped, :running])
      end

      it 'logs the failure against that clone' do
        providers
        expect_wave_failure
        expect(providers[1].resource).to receive(:err).with(%r{Could not start clone clone2: })
        expect { described_class.post_resource_eval }.to raise_error(Puppet::Error)
      end
    end
  end

  describe '#destroy' do
    it 'queues the clone and removes it after all clones are evaluated' do
      resource = clone_resource('clone1', ensure: 'absent')
      provider = prefetched(resource, :running)
      expect(PuppetX::CloneArmy::Runner).not_to receive(:run)
      provider.destroy
      expect(provider.state).to eq(:absent)
      expect(described_class.batch.removals).to eq([provider])
      RSpec::Mocks.space.proxy_for(PuppetX::CloneArmy::Runner).reset
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      described_class.post_resource_eval
      expect(described_class.batch.removals).to eq([])
    end

    it 'removes every clone of the run with one call' do
      providers = ['clone1', 'clone2'].map { |name| prefetched(clone_resource(name, ensure: 'absent'), :running) }
      providers.each(&:destroy)
      expect_helper(['clone', 'remove', '--', 'clone1', 'clone2'], 'clone_remove_names.json')
      described_class.post_resource_eval
    end

    it 'removes them one by one when the batch fails, and fails the one that failed' do
      providers = ['clone1', 'clone2'].map { |name| prefetched(clone_resource(name, ensure: 'absent'), :running) }
      providers.each(&:destroy)
      expect_helper(['clone', 'remove', '--', 'clone1', 'clone2'], 'error_systemd.json', 1)
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      expect_helper(['clone', 'remove', '--', 'clone2'], 'error_systemd.json', 1)
      expect { described_class.post_resource_eval }
        .to raise_error(Puppet::Error, %r{\ACould not remove clone clone2: clone-army clone remove -- clone2 failed \[systemd\]})
    end
  end

  describe 'restarts for changes a clone reads only when it boots' do
    let(:listed) { JSON.parse(helper_fixture('clone_list_shape.json'))['result']['clones'] }

    def provider_of(clone, attributes = {})
      resource = clone_resource(clone['name'], { ensure: 'present' }.merge(attributes))
      described_class.new(described_class.from_helper(clone)).tap { |provider| resource.provider = provider }
    end

    it 'are triggered by run_mode, runinterval, splay and certname, in one place' do
      expect(described_class.restart_on).to eq([:run_mode, :runinterval, :splay, :certname, :apply_source])
    end

    it 'restarts a running clone whose run mode changed: configure, then one stop and one start' do
      provider = provider_of(listed[0])
      provider.run_mode = :daemon
      expect_helper(['clone', 'configure', '--run-mode', 'daemon', '--', 'clone1'], 'clone_configure_shape.json')
      provider.flush
      expect(described_class.batch.restarts).to eq([[provider, 0]])
      expect_helper(['clone', 'stop', '--', 'clone1'], 'clone_stop.json')
      expect_helper(['clone', 'start', '--', 'clone1'], 'clone_start_clone1.json')
      described_class.post_resource_eval
      expect(provider.state).to eq(:running)
    end

    ['runinterval', 'splay', 'certname'].each do |property|
      it "restarts a running clone whose #{property} changed" do
        provider = provider_of(listed[0])
        provider.public_send(:"#{property}=", property == 'certname' ? 'c1.example.com' : 900)
        allow(PuppetX::CloneArmy::Runner).to receive(:run).and_return(helper_output('clone_configure_shape.json'))
        provider.flush
        expect(described_class.batch.restarts.map(&:first)).to eq([provider])
      end
    end

    it 'does not restart for a new phase, phasing, limit or facts' do
      provider = provider_of(listed[0])
      provider.phase_index = 1
      provider.phase_count = 3
      provider.phasing = :'fleet-even'
      provider.memory_max = '512M'
      provider.generated_facts = 5
      allow(PuppetX::CloneArmy::Runner).to receive(:run).and_return(helper_output('clone_configure_shape.json'))
      provider.flush
      expect(described_class.batch.restarts).to eq([])
    end

    it 'does not restart a stopped clone, or one that is to be stopped' do
      stopped = provider_of(listed[1])
      stopped.run_mode = :timer
      stopping = provider_of(listed[0], ensure: 'stopped')
      stopping.run_mode = :daemon
      allow(PuppetX::CloneArmy::Runner).to receive(:run) do |argv, _options|
        helper_output(argv.last == 'clone2' ? 'clone_configure_clone2.json' : 'clone_configure_shape.json')
      end
      [stopped, stopping].each(&:flush)
      expect(described_class.batch.restarts).to eq([])
    end

    it 'restarts a clone that is also notified only once' do
      provider = provider_of(listed[0])
      provider.run_mode = :daemon
      expect_helper(['clone', 'configure', '--run-mode', 'daemon', '--', 'clone1'], 'clone_configure_shape.json')
      provider.flush
      provider.restart
      expect_helper(['clone', 'stop', '--', 'clone1'], 'clone_stop.json')
      expect_helper(['clone', 'start', '--', 'clone1'], 'clone_start_clone1.json')
      described_class.post_resource_eval
    end

    it 'stops all of them with one call and starts them over ramp_up with the new clones' do
      restarted = ['clone1', 'clone2'].map do |name|
        resource = clone_resource(name, ensure: 'present', ramp_up: 10)
        described_class.new(name: name, ensure: :running).tap { |provider| resource.provider = provider }
      end
      restarted.each { |provider| described_class.batch.restart(provider, 10) }
      created = described_class.new(name: 'clone3', ensure: :stopped)
      clone_resource('clone3', full.merge(ensure: 'present')).provider = created
      described_class.batch.start(created, 0)
      expect_helper(['clone', 'stop', '--', 'clone1', 'clone2'], 'generated/clone_stop_clone1_clone2.json')
      expect_helper(['clone', 'start', '--ramp-up', '10', '--', 'clone3', 'clone1', 'clone2'],
                    'generated/clone_start_clone3_clone1_clone2.json')
      described_class.post_resource_eval
      expect((restarted + [created]).map(&:state)).to eq([:running, :running, :running])
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
      resource = clone_resource('clone2', ensure: 'running', server: 'puppet2.example.com')
      provider = prefetched(resource, :stopped)
      provider.server = 'puppet2.example.com'
      expect_helper(['clone', 'configure', '--server', 'puppet2.example.com', '--', 'clone2'], 'clone_configure_clone2.json')
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
      expect_helper(['clone', 'stop', '--', 'clone2'], 'generated/clone_stop_clone2.json')
      expect_helper(['clone', 'start', '--', 'clone2'], 'clone_start.json')
      provider.restart
      expect(provider.state).to eq(:running)
    end
  end

  describe '#flush' do
    it 'does nothing when nothing changed' do
      resource = clone_resource('clone1', ensure: 'present')
      provider = prefetched(resource, :running)
      expect(PuppetX::CloneArmy::Runner).not_to receive(:run)
      provider.flush
    end

    it 're-points server and certname with one configure call' do
      resource = clone_resource('clone1', ensure: 'present')
      provider = prefetched(resource, :running)
      provider.server = 'puppet2.example.com'
      provider.certname = 'c1.example.com'
      expect_helper(['clone', 'configure', '--server', 'puppet2.example.com', '--certname', 'c1.example.com', '--', 'clone1'],
                    'clone_configure.json')
      provider.flush
      expect(provider.server).to eq('puppet2.example.com')
      expect(provider.state).to eq(:running)
    end

    it 'recreates a running clone on a new base and starts it again' do
      resource = clone_resource('clone1', ensure: 'present', base: 'debian-13')
      provider = prefetched(resource, :running)
      provider.base = 'debian-13'
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      expect_helper(['clone', 'create', '--base', 'debian-13', '--server', 'puppet.example.com',
                     '--certname', 'clone1.loadhost.example.com', '--', 'clone1'], 'generated/clone_create_clone1.json', 0,
                    'base' => 'debian-13')
      provider.flush
      expect(provider.base).to eq('debian-13')
      expect_helper(['clone', 'start', '--', 'clone1'], 'clone_start_clone1.json')
      described_class.post_resource_eval
      expect(provider.state).to eq(:running)
    end

    it 'recreates a stopped clone stopped, with a new server as well' do
      resource = clone_resource('clone2', ensure: 'present', base: 'debian-13')
      provider = prefetched(resource, :stopped)
      provider.base = 'debian-13'
      provider.server = 'puppet2.example.com'
      expect_helper(['clone', 'remove', '--', 'clone2'], 'clone_remove.json')
      expect_helper(['clone', 'create', '--base', 'debian-13', '--server', 'puppet2.example.com',
                     '--certname', 'clone2.loadhost.example.com', '--', 'clone2'], 'generated/clone_create_clone2.json', 0,
                    'base' => 'debian-13', 'server' => 'puppet2.example.com')
      provider.flush
      expect(provider.state).to eq(:stopped)
      expect(provider.server).to eq('puppet2.example.com')
    end

    it "recreates a clone whose server is unknown with the host agent's, as a new clone gets" do
      Puppet[:server] = 'puppet'
      Puppet[:server_list] = ''
      resource = clone_resource('clone2', ensure: 'present', base: 'debian-13')
      provider = prefetched(resource, :stopped, server: :absent)
      provider.base = 'debian-13'
      expect_helper(['clone', 'remove', '--', 'clone2'], 'clone_remove.json')
      expect_helper(['clone', 'create', '--base', 'debian-13', '--server', 'puppet',
                     '--certname', 'clone2.loadhost.example.com', '--', 'clone2'], 'generated/clone_create_clone2.json', 0,
                    'base' => 'debian-13', 'server' => 'puppet')
      provider.flush
      expect(provider.server).to eq('puppet')
    end

    it 're-points the server port alone with one configure call' do
      resource = clone_resource('clone1', ensure: 'present')
      provider = prefetched(resource, :running)
      provider.server_port = 8141
      expect_helper(['clone', 'configure', '--server-port', '8141', '--', 'clone1'], 'clone_configure.json', 0,
                    'server_port' => 8141)
      provider.flush
      expect(provider.server_port).to eq(8141)
      expect(provider.state).to eq(:running)
    end

    it 're-points a clone with clone configure' do
      resource = clone_resource('clone1', ensure: 'present')
      provider = prefetched(resource, :running)
      provider.certname = 'c1.example.com'
      expect_helper(['clone', 'configure', '--certname', 'c1.example.com', '--', 'clone1'],
                    'generated/clone_configure_clone1_certname.json')
      provider.flush
      expect(provider.certname).to eq('c1.example.com')
      expect(provider.server).to eq('puppet.example.com')
    end

    it 'does nothing after the clone was destroyed' do
      resource = clone_resource('clone1', ensure: 'absent')
      provider = prefetched(resource, :running)
      provider.server = 'puppet2.example.com'
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      provider.destroy
      provider.flush
      described_class.post_resource_eval
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
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      transaction = apply(
        clone_resource('clone1', ensure: 'present', base: 'debian-12', server: 'puppet.example.com'),
        clone_resource('clone2', ensure: 'present', base: 'debian-12', server: 'puppet.example.com'),
      )
      expect(transaction.report.resource_statuses.values.map(&:changed)).to eq([false, false])
    end

    it 're-points and starts a stopped clone in one run' do
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      expect_helper(['clone', 'configure', '--server', 'puppet2.example.com', '--', 'clone2'], 'clone_configure_clone2.json')
      expect_helper(['clone', 'start', '--', 'clone2'], 'clone_start.json')
      transaction = apply(clone_resource('clone2', ensure: 'running', server: 'puppet2.example.com'))
      expect(transaction.report.resource_statuses['Clone_army_clone[clone2]'].changed).to be true
    end

    it 'takes the helper\'s forms of the load shape as in sync' do
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list_shape.json')
      transaction = apply(
        clone_resource('clone1', ensure: 'present', run_mode: 'timer', runinterval: 1800, splay: 0, phase_index: 0,
                                 phase_count: 2, memory_max: '1024M', cpu_quota: 50, tasks_max: '4096',
                                 facts: { 'tier' => 3, 'role' => 'web' }, generated_facts: 500, churn_percent: 15),
        # Manual mode forgets the schedule, and without generated facts there is no churn.
        clone_resource('clone2', ensure: 'present', run_mode: 'manual', runinterval: 1800, splay: 0, phase_index: 1,
                                 phase_count: 2, memory_max: 'none', cpu_quota: 'none', tasks_max: 'none', facts: {},
                                 generated_facts: 0, churn_percent: 15),
      )
      expect(transaction.report.resource_statuses.values.map(&:changed)).to eq([false, false])
    end

    it 'applies a changed load shape with one configure call, and restarts the running clone' do
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list_shape.json')
      expect_helper(['clone', 'configure', '--run-mode', 'daemon', '--runinterval', '900', '--memory-max', '512M',
                     '--', 'clone1'], 'clone_configure_shape.json')
      expect_helper(['clone', 'stop', '--', 'clone1'], 'clone_stop.json')
      expect_helper(['clone', 'start', '--', 'clone1'], 'clone_start_clone1.json')
      transaction = apply(clone_resource('clone1', ensure: 'present', run_mode: 'daemon', runinterval: 900,
                                                   memory_max: '512M', cpu_quota: '50%'))
      expect(transaction.report.resource_statuses['Clone_army_clone[clone1]'].changed).to be true
    end

    it 'gives a clone leaving manual mode its schedule' do
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list_shape.json')
      expect_helper(['clone', 'configure', '--run-mode', 'timer', '--runinterval', '1800', '--phase-index', '1',
                     '--phase-count', '2', '--', 'clone2'], 'clone_configure_clone2.json')
      apply(clone_resource('clone2', ensure: 'present', run_mode: 'timer', runinterval: 1800, phase_index: 1, phase_count: 2))
    end

    it 'creates many clones, then the fleet starts them together, and fails the run for a clone that does not start' do
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list_empty.json')
      expect_base_list
      expect_create_many([create_args('clone1'), create_args('clone2')], 'generated/clone_create_many_clone1_clone2_clone3.json')
      expect_helper(['clone', 'start', '--', 'clone1', 'clone2'], 'error_systemd.json', 1)
      expect_helper(['clone', 'start', '--', 'clone1'], 'clone_start_clone1.json')
      expect_helper(['clone', 'start', '--', 'clone2'], 'error_systemd.json', 1)
      Puppet[:vardir] = @helper_dir
      catalog = Puppet::Resource::Catalog.new
      ['clone1', 'clone2'].each do |name|
        catalog.add_resource(clone_resource(name, full.merge(ensure: 'present', certname: "#{name}.loadhost.example.com")))
      end
      catalog.add_resource(Puppet::Type.type(:clone_army_fleet).new(name: 'clones'))
      transaction = catalog.apply
      transaction.report.finalize_report
      statuses = transaction.report.resource_statuses
      expect(statuses['Clone_army_clone[clone1]'].failed).to be false
      expect(statuses['Clone_army_fleet[clones]'].failed).to be true
      expect(transaction.report.status).to eq('failed')
      expect(transaction.report.exit_status & 4).to eq(4)
      errors = transaction.report.logs.select { |log| log.level == :err }
      # The error is logged against the clone that failed, and fails the fleet.
      expect(errors.find { |log| log.source == '/Clone_army_clone[clone2]' }&.message).to match(%r{Could not start clone clone2})
      expect(errors.find { |log| log.source.start_with?('/Clone_army_fleet[clones]') }&.message).to match(%r{Could not start clone clone2})
    end

    def notifying(target)
      Puppet::Type.type(:notify).new(name: 'config changed', notify: target.to_s)
    end

    it 'restarts a running clone when notified' do
      clone1 = clone_resource('clone1', ensure: 'present')
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      expect_helper(['clone', 'stop', '--', 'clone1'], 'clone_stop.json')
      expect_helper(['clone', 'start', '--', 'clone1'], 'clone_start_clone1.json')
      apply(notifying(clone1.ref), clone1)
    end

    it 'leaves a stopped clone stopped when notified' do
      clone2 = clone_resource('clone2', ensure: 'present')
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      apply(notifying(clone2.ref), clone2)
    end

    it 'starts a notified stopped clone only once' do
      clone2 = clone_resource('clone2', ensure: 'running')
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      expect_helper(['clone', 'start', '--', 'clone2'], 'clone_start.json')
      apply(notifying(clone2.ref), clone2)
    end

    it 'recreates a running clone on a new base in one run, running again' do
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      expect_helper(['clone', 'create', '--base', 'debian-13', '--server', 'puppet.example.com',
                     '--certname', 'clone1.loadhost.example.com', '--', 'clone1'], 'generated/clone_create_clone1.json')
      expect_helper(['clone', 'start', '--', 'clone1'], 'clone_start_clone1.json')
      apply(clone_resource('clone1', ensure: 'present', base: 'debian-13'))
    end

    it 'recreates a running clone on a new base stopped when it is to be stopped, without another stop' do
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      expect_helper(['clone', 'remove', '--', 'clone1'], 'clone_remove.json')
      expect_helper(['clone', 'create', '--base', 'debian-13', '--server', 'puppet.example.com',
                     '--certname', 'clone1.loadhost.example.com', '--', 'clone1'], 'generated/clone_create_clone1.json')
      apply(clone_resource('clone1', ensure: 'stopped', base: 'debian-13'))
    end

    it 'removes a clone' do
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      expect_helper(['clone', 'remove', '--', 'clone2'], 'clone_remove.json')
      apply(clone_resource('clone2', ensure: 'absent', base: 'debian-12', server: 'puppet2.example.com'))
    end

    it 'creates a missing clone and starts it once' do
      expect_helper(['clone', 'list', '--format', 'json'], 'clone_list.json')
      expect_base_list
      expect_create_many([create_args])
      expect_helper(['clone', 'start', '--', 'clone3'], 'clone_start_clone3.json')
      apply(clone_resource('clone3', full.merge(ensure: 'present')))
    end
  end
end
