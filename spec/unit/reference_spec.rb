# frozen_string_literal: true

require 'spec_helper'
require 'json'

# REFERENCE.md stays true to the code: every class parameter, type
# attribute and task parameter has its entry.
describe 'REFERENCE.md' do
  root = File.expand_path('../..', __dir__)
  reference = File.read(File.join(root, 'REFERENCE.md'))

  # The text of one `### ` section, from its anchor to the next section.
  section = lambda do |anchor|
    start = reference.index(%(<a name="#{anchor}"></a>)) or raise "REFERENCE.md has no section #{anchor}"
    rest = reference[start..]
    # Up to the next heading of level 2 or 3.
    rest[0, rest.index(%r{^###? }, 1) || rest.size]
  end

  it 'documents every parameter of class clone_army' do
    init = File.read(File.join(root, 'manifests/init.pp'))
    params = init[%r{^class clone_army \((.*?)^\) \{}m, 1].scan(%r{^\s+\S.*?\$(\w+)\s*(?:=|,)}).flatten
    expect(params).not_to be_empty
    missing = params.reject { |param| reference.include?(%(<a name="-clone_army--#{param}"></a>)) }
    expect(missing).to eq([])
    # Each entry, up to the next heading, shows the parameter in use.
    without_example = params.reject do |param|
      rest = reference[reference.index(%(<a name="-clone_army--#{param}"></a>))..]
      rest[0, rest.index(%r{^#}, 1) || rest.size].match?(%r{^Example:.*\b#{param}\s*=>}m)
    end
    expect(without_example).to eq([])
  end

  it 'documents every data type in types/, with an example' do
    names = Dir[File.join(root, 'types', '*.pp')].map { |file| "Clone_army::#{File.basename(file, '.pp').capitalize}" }
    expect(names).not_to be_empty
    missing = names.reject { |name| section.call(name.sub('::', '--')).match?(%r{^Example:}) }
    expect(missing).to eq([])
  end

  it 'documents every function, with an example' do
    names = Dir[File.join(root, 'lib/puppet/functions/clone_army', '*.rb')].map { |file| "clone_army::#{File.basename(file, '.rb')}" }
    expect(names).not_to be_empty
    missing = names.reject { |name| section.call(name.sub('::', '--')).match?(%r{^Example:}) }
    expect(missing).to eq([])
  end

  ['clone_army_base', 'clone_army_clone', 'clone_army_fleet', 'clone_army_twins'].each do |name|
    it "documents every attribute of type #{name}" do
      type = Puppet::Type.type(name.to_sym)
      text = section.call(name)
      missing = type.validproperties.reject { |property| text.include?("##### `#{property}`") }
      missing += type.parameters.reject { |param| text.include?(%(<a name="-#{name}--#{param}"></a>)) }
      expect(missing).to eq([])
    end
  end

  Dir[File.join(root, 'tasks', '*.json')].sort.each do |file|
    task = "clone_army::#{File.basename(file, '.json')}"
    it "documents every parameter of task #{task}" do
      text = section.call(task.sub('::', '--'))
      params = JSON.parse(File.read(file))['parameters'].keys
      missing = params.reject { |param| text.include?("| `#{param}` |") }
      expect(missing).to eq([])
    end
  end
end
