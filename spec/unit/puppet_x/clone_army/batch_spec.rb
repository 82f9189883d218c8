# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/batch'

describe PuppetX::CloneArmy::Batch do
  subject(:batch) { described_class.new(pause: ->(seconds) { pauses << seconds }) }

  # The seconds the batch paused, in order (it never sleeps here).
  let(:pauses) { [] }

  # Records the helper calls of every clone (one helper, shared, as the
  # providers of one run share the helper's path) and fails those told to.
  let(:calls) { [] }
  let(:failing) { {} }
  let(:helper) do
    calls = self.calls
    failing = self.failing
    Class.new {
      define_method(:call) do |verb, names, options = {}|
        calls << [verb, names, options]
        raise Puppet::Error, "#{verb} of #{names.join(' ')} failed" if names.any? { |name| failing[verb]&.include?(name) }

        names.map { |name| { 'name' => name, 'state' => { 'stop' => 'stopped', 'start' => 'running' }[verb] } }
      end
      define_method(:clone_remove) { |*names| call('remove', names) }
      define_method(:path) { '/usr/local/sbin/clone-army' }
      define_method(:base_list) { [{ 'name' => 'debian-12' }] }
      define_method(:clone_create_many) { |requests| call('create', requests.keys) }
      define_method(:clone_stop) { |*names| call('stop', names) }
      define_method(:clone_start) { |*names, ramp_up: 0| call('start', names, ramp_up: ramp_up) }
    }.new
  end

  # A provider as the batch sees one: a name, a state, the helper,
  # update_from, and for a create its base, files and request.
  def clone(name, state)
    helper = self.helper
    Struct.new(:name, :state) {
      define_method(:helper) { helper }
      define_method(:update_from) do |answered|
        clone = answered.find { |entry| entry['name'] == name }
        self.state = clone['state'].to_sym if clone&.fetch('state')
      end
      define_method(:base_to_create) { 'debian-12' }
      define_method(:create_files) { {} }
      define_method(:create_request) { |_paths| {} }
    }.new(name, state)
  end

  it 'does nothing when nothing is queued' do
    expect(batch.run).to eq([])
    expect(calls).to eq([])
  end

  it 'removes, then stops the restarts, then starts the new and restarted clones with the largest ramp_up' do
    gone = clone('c0', :running)
    restarted = clone('c1', :running)
    created = clone('c2', :stopped)
    batch.start(created, 30)
    batch.restart(restarted, 60)
    batch.remove(gone)
    expect(batch.summary).to eq('removed c0; restarted c1 over 60 s; started c2 over 60 s')
    expect(batch.run).to eq([])
    expect(calls).to eq([['remove', ['c0'], {}], ['stop', ['c1'], {}], ['start', ['c2', 'c1'], { ramp_up: 60 }]])
    expect([restarted.state, created.state]).to eq([:running, :running])
    expect(batch).to be_empty
  end

  it 'queues each clone once' do
    created = clone('c2', :stopped)
    2.times { batch.start(created, 0) }
    2.times { batch.remove(created) }
    expect(batch.starts.size).to eq(1)
    expect(batch.removals.size).to eq(1)
    expect(batch.restarting?(created)).to be(false)
  end

  it 'makes one call per kind however many clones are queued' do
    clones = (1..500).map { |index| clone("c#{index}", :stopped) }
    clones.each { |c| batch.start(c, 0) }
    batch.run
    expect(calls.size).to eq(1)
    expect(calls.first).to eq(['start', clones.map(&:name), { ramp_up: 0 }])
  end

  it 'tries a failed call one clone at a time and names the clones that failed' do
    failing['start'] = ['c2']
    clones = ['c1', 'c2', 'c3'].map { |name| clone(name, :stopped) }
    clones.each { |c| batch.start(c, 20) }
    failures = batch.run
    expect(failures.map { |f| [f.provider.name, f.verb] }).to eq([['c2', 'start']])
    expect(failures.first.error.message).to match(%r{start of c2 failed})
    expect(clones.map(&:state)).to eq([:running, :stopped, :running])
    # The retries are single clones: nothing to spread over the ramp-up.
    expect(calls.drop(1)).to eq([['start', ['c1'], { ramp_up: 0 }], ['start', ['c2'], { ramp_up: 0 }], ['start', ['c3'], { ramp_up: 0 }]])
  end

  it 'never starts the fleet at once after a ramped start failed: the retries keep its pace, and say so' do
    failing['start'] = ['c2']
    clones = ['c1', 'c2', 'c3', 'c4'].map { |name| clone(name, :stopped) }
    clones.each { |c| batch.start(c, 40) }
    expect(Puppet).to receive(:warning).with(%r{start of c1 c2 c3 c4 failed .*one every 10\.0 s to keep the ramp-up})
    batch.run
    expect(calls.drop(1).map { |_, names, _| names }).to eq([['c1'], ['c2'], ['c3'], ['c4']])
    # A pause before each retry but the first, each up to a quarter of the 40 s ramp.
    expect(pauses.size).to eq(3)
    pauses.each { |seconds| expect(seconds).to be_within(0.5).of(10) }
  end

  it 'retries a start without a ramp-up at once, as before' do
    failing['start'] = ['c2']
    ['c1', 'c2', 'c3'].each { |name| batch.start(clone(name, :stopped), 0) }
    expect(Puppet).not_to receive(:warning)
    batch.run
    expect(pauses).to eq([])
  end

  it 'does not start a clone whose stop for a restart failed' do
    failing['stop'] = ['c1']
    stuck = clone('c1', :running)
    batch.restart(stuck, 0)
    failures = batch.run
    expect(failures.map(&:verb)).to eq(['restart'])
    expect(calls.map(&:first)).to eq(['stop', 'stop'])
  end

  it 'a_clone_made_ahead_that_no_create_claimed_is_removed_before_the_starts' do
    claimed = clone('c1', :absent)
    unclaimed = clone('c2', :absent)
    batch.creations.create(claimed, [claimed, unclaimed])
    batch.start(claimed, 0)
    expect(batch).not_to be_empty
    expect(batch.summary).to eq('removed c2; started c1')
    expect(batch.run).to eq([])
    expect(calls.map { |verb, names, _| [verb, names] }).to eq([['create', ['c1', 'c2']], ['remove', ['c2']], ['start', ['c1']]])
    expect(batch).to be_empty
  end

  it 'runs the removals alone when asked (before a base goes)' do
    gone = clone('c0', :running)
    batch.remove(gone)
    batch.start(clone('c2', :stopped), 0)
    expect(batch.run_removals).to eq([])
    expect(calls).to eq([['remove', ['c0'], {}]])
    expect(batch.starts.size).to eq(1)
  end
end
