# frozen_string_literal: true

require 'spec_helper'

describe Puppet::Type.type(:clone_army_fleet) do
  let(:clones) { Puppet::Type.type(:clone_army_clone).provider(:clone_army) }

  before(:each) { clones.instance_variable_set(:@batch, nil) }

  it 'requires every clone in the catalog, so it runs after them' do
    catalog = Puppet::Resource::Catalog.new
    fleet = described_class.new(name: 'clones')
    ['clone1', 'clone2'].each do |name|
      catalog.add_resource(Puppet::Type.type(:clone_army_clone).new(name: name, ensure: 'present'))
    end
    catalog.add_resource(fleet)
    expect(fleet.autorequire.map { |edge| edge.source.to_s }).to contain_exactly('Clone_army_clone[clone1]', 'Clone_army_clone[clone2]')
  end

  it 'is in sync when nothing is queued, and out of sync otherwise' do
    fleet = described_class.new(name: 'clones')
    expect(fleet.provider.state).to eq(:settled)
    queued = double('clone provider', name: 'clone1')
    clones.batch.remove(queued)
    expect(fleet.provider.state).to eq(:pending)
  end

  it 'does the queued work, and says what it did' do
    fleet = described_class.new(name: 'clones')
    helper = double('helper')
    queued = double('clone provider', name: 'clone4', helper: helper, resource: nil)
    clones.batch.remove(queued)
    expect(helper).to receive(:clone_remove).with('clone4')
    fleet.provider.state = :settled
    expect(fleet.provider.done).to eq('removed clone4')
    expect(fleet.property(:state).change_to_s(:pending, :settled)).to eq('removed clone4')
    expect(clones.batch).to be_empty
  end

  it 'fails naming every clone that failed' do
    fleet = described_class.new(name: 'clones')
    helper = double('helper')
    allow(helper).to receive(:clone_remove).and_raise(Puppet::Error, 'no such unit')
    queued = ['clone4', 'clone5'].map { |name| double("provider #{name}", name: name, helper: helper, resource: nil) }
    queued.each { |provider| clones.batch.remove(provider) }
    expect { fleet.provider.state = :settled }
      .to raise_error(Puppet::Error, %r{Could not remove clone clone4: no such unit; Could not remove clone clone5: no such unit})
  end

  it 'takes only settled' do
    expect { described_class.new(name: 'clones', state: 'pending') }.to raise_error(Puppet::ResourceError)
  end
end
