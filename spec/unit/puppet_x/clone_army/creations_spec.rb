# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/creations'

describe PuppetX::CloneArmy::Creations do
  subject(:creations) { described_class.new }

  # Records the helper calls (one helper, as the providers of one run share
  # it), answers `bases` to `base list` and fails the creates told to.
  let(:calls) { [] }
  let(:failing) { [] }
  let(:bases) { ['debian-12'] }
  let(:helper) do
    calls = self.calls
    failing = self.failing
    bases = self.bases
    Class.new {
      define_method(:path) { '/usr/local/sbin/clone-army' }
      define_method(:base_list) do
        calls << ['base list']
        bases.map { |name| { 'name' => name } }
      end
      # Each file the requests name is read while the call "runs".
      define_method(:clone_create_many) do |requests|
        calls << ['create', requests.keys, requests.transform_values { |request| File.read(request[:facts_file]) }]
        raise Puppet::Error, "create of #{requests.keys.join(' ')} failed" if requests.keys.intersect?(failing)

        requests.keys.map { |name| { 'name' => name, 'state' => 'stopped' } }
      end
    }.new
  end

  # A provider as Creations sees one: a name, the helper, the base it is
  # made from, the files it names (its facts) and its request given their paths.
  def clone(name, base = 'debian-12', helper = self.helper)
    Struct.new(:name) {
      define_method(:helper) { helper }
      define_method(:base_to_create) { base }
      define_method(:create_files) { { "#{name}.facts": "{\"clone\": \"#{name}\"}" } }
      define_method(:create_request) { |paths| { facts_file: paths[:"#{name}.facts"] } }
    }.new(name)
  end

  it 'makes every pending clone with one call at the first create, their files all there during it' do
    pending = ['c1', 'c2', 'c3'].map { |name| clone(name) }
    answers = pending.map { |provider| creations.create(provider, pending) }
    files = ['c1', 'c2', 'c3'].to_h { |name| [name, "{\"clone\": \"#{name}\"}"] }
    expect(calls).to eq([['base list'], ['create', ['c1', 'c2', 'c3'], files]])
    expect(answers.map { |answer| answer.map { |clone| clone['name'] } }.uniq).to eq([['c1', 'c2', 'c3']])
    expect(creations.unclaimed).to eq([])
  end

  it 'a_failed_member_of_a_batch_fails_its_own_create_and_not_its_siblings' do
    failing << 'c2'
    pending = ['c1', 'c2', 'c3'].map { |name| clone(name) }
    expect(creations.create(pending[0], pending).map { |clone| clone['name'] }).to eq(['c1'])
    expect { creations.create(pending[1], pending) }.to raise_error(Puppet::Error, 'create of c2 failed')
    expect(creations.create(pending[2], pending).map { |clone| clone['name'] }).to eq(['c3'])
    expect(calls.map { |call| call.take(2) })
      .to eq([['base list'], ['create', ['c1', 'c2', 'c3']], ['create', ['c1']], ['create', ['c2']], ['create', ['c3']]])
  end

  it 'a_clone_on_a_missing_base_is_refused_before_anything_is_written' do
    lost = clone('c1', 'no-such-base')
    expect { creations.create(lost, [lost]) }
      .to raise_error(Puppet::Error, 'cannot create clone c1: base "no-such-base" does not exist (there are debian-12; ' \
                                     'a clone_army_base resource of that name builds it)')
    expect(calls).to eq([['base list']])
    # Tried once in a run: a later batch leaves it out.
    other = clone('c2')
    creations.create(other, [lost, other])
    expect(calls.last.take(2)).to eq(['create', ['c2']])
  end

  it 'leaves a clone whose base is not built yet to its own create, which lists the bases again' do
    later = clone('c2', 'debian-13')
    first = clone('c1')
    creations.create(first, [first, later])
    bases << 'debian-13'
    creations.create(later, [first, later])
    expect(calls.map { |call| call.take(2) }).to eq([['base list'], ['create', ['c1']], ['base list'], ['create', ['c2']]])
  end

  it 'leaves out a pending clone of another helper' do
    other_helper = helper.dup
    other_helper.define_singleton_method(:path) { '/opt/clone-army' }
    first = clone('c1')
    creations.create(first, [first, clone('c2', 'debian-12', other_helper)])
    expect(calls.last.take(2)).to eq(['create', ['c1']])
  end

  it 'hands back the clones made ahead that no create claimed, once' do
    pending = ['c1', 'c2'].map { |name| clone(name) }
    creations.create(pending[0], pending)
    expect(creations.take_unclaimed).to eq([pending[1]])
    expect(creations.take_unclaimed).to eq([])
  end
end
