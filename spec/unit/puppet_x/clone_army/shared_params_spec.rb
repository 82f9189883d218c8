# frozen_string_literal: true

require 'spec_helper'
require 'puppet_x/clone_army/schema'

# Each type writes its attributes out where puppet-strings reads them for
# REFERENCE.md, so what several types share is written more than once: the
# copies must say the same, and the values a type lists must be the helper's.
describe 'the attributes the types share' do
  doc_of = ->(type, name) { Puppet::Type.type(type).attrclass(name).doc }

  it 'gives every type the same helper' do
    docs = [:clone_army_base, :clone_army_clone, :clone_army_twins].map { |type| doc_of.call(type, :helper) }
    expect(docs.uniq.size).to eq(1)
    expect(docs.first).to match(%r{never run})
  end

  it 'gives both types that take a server the same master' do
    docs = [:clone_army_base, :clone_army_clone].map { |type| doc_of.call(type, :master) }
    expect(docs.uniq.size).to eq(1)
    expect(docs.first).to match(%r{Deprecated})
  end

  {
    [:clone_army_base, :os] => ['os'],
    [:clone_army_clone, :run_mode] => ['run_modes', 'values'],
    [:clone_army_clone, :phasing] => ['phasings', 'values'],
  }.each do |(type, name), path|
    it "lists the helper's values as #{type}'s #{name} (clone-army schema's #{path.join('.')})" do
      values = Puppet::Type.type(type).attrclass(name).value_collection.values.map(&:to_s)
      expect(values).to eq(PuppetX::CloneArmy::Schema.fetch(*path))
    end
  end
end
