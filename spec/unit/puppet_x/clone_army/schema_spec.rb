# frozen_string_literal: true

require 'spec_helper'
require_relative '../../../../lib/puppet_x/clone_army/schema'
require_relative '../../../../lib/puppet_x/clone_army/names'
require_relative '../../../../lib/puppet_x/clone_army/shape'
require_relative '../../../../lib/puppet_x/clone_army/secrets'

# The Puppet side against the helper's rules (lib/puppet_x/clone_army/schema.json,
# which the helper's tests keep equal to `clone-army schema`): the Ruby
# checks agree with the helper's own examples, and the type aliases in
# types/ say what the schema says.
describe PuppetX::CloneArmy::Schema do
  schema = described_class::DATA
  types = File.expand_path('../../../../types', __dir__)
  # The body of a type alias, e.g. "Enum['daemon', 'timer']".
  alias_body = ->(name) { File.read(File.join(types, "#{name}.pp"))[%r{^type Clone_army::\w+ = (.*)$}, 1] }
  enum_values = ->(body) { body.scan(%r{'([^']*)'}).flatten }

  {
    'clone' => ->(name) { PuppetX::CloneArmy::Names.validate_name('name', name, 'clone1') },
    'base' => ->(name) { PuppetX::CloneArmy::Names.validate_base_name('name', name, 'debian-12') },
    'hostname' => ->(name) { PuppetX::CloneArmy::Names.validate_hostname('server', name, 'puppet') },
  }.each do |kind, check|
    describe "#{kind} names" do
      schema.dig('names', kind, 'valid').each do |name|
        it("accepts #{name.inspect} as the helper does") { expect { check.call(name) }.not_to raise_error }
      end
      schema.dig('names', kind, 'invalid').each do |name|
        it("refuses #{name.inspect} as the helper does") { expect { check.call(name) }.to raise_error(ArgumentError) }
      end
      it 'takes names up to the helper\'s length and no longer' do
        longest = schema.dig('names', kind, 'max_length')
        label = kind == 'hostname' ? (['a' * 63] * 4).join('.')[0, longest] : 'a' * longest
        expect { check.call(label) }.not_to raise_error
        expect { check.call("#{label}a") }.to raise_error(ArgumentError)
      end
    end
  end

  it 'has the type aliases for names and host names match the helper\'s patterns' do
    name = Regexp.new(alias_body.call('name')[%r{\APattern\[/(.*)/\]\z}, 1])
    hostname = Regexp.new(alias_body.call('hostname')[%r{\APattern\[/(.*)/\]\z}, 1])
    schema.dig('names', 'clone', 'valid').each { |n| expect(n).to match(name) }
    schema.dig('names', 'clone', 'invalid').each { |n| expect(n).not_to match(name) }
    schema.dig('names', 'hostname', 'valid').each { |n| expect(n).to match(hostname) }
    schema.dig('names', 'hostname', 'invalid').each { |n| expect(n).not_to match(hostname) }
    expect('a' * 254).not_to match(hostname)
  end

  it 'has Clone_army::Apply_source and the type take the apply source paths the helper takes' do
    alias_pattern = Regexp.new(alias_body.call('apply_source')[%r{\AOptional\[Pattern\[/(.*)/\]\]\z}, 1])
    schema.dig('apply_source', 'valid').each do |path|
      expect(path).to match(alias_pattern)
      expect(PuppetX::CloneArmy::Shape.apply_source(path)).to eq(path)
    end
    schema.dig('apply_source', 'invalid').each do |path|
      expect(path).not_to match(alias_pattern)
      expect { PuppetX::CloneArmy::Shape.apply_source(path) }.to raise_error(ArgumentError, %r{apply_source must be})
    end
  end

  it 'has Clone_army::Run_mode list the helper\'s run modes' do
    expect(enum_values.call(alias_body.call('run_mode'))).to eq(schema.dig('run_modes', 'values'))
    expect(PuppetX::CloneArmy::Shape::RUN_MODES.map(&:to_s)).to eq(schema.dig('run_modes', 'values'))
  end

  it 'has Clone_army::Phasing, the type and the class take the helper\'s phasing rules and default' do
    expect(enum_values.call(alias_body.call('phasing'))).to eq(schema.dig('phasings', 'values'))
    expect(PuppetX::CloneArmy::Shape::PHASINGS.map(&:to_s)).to eq(schema.dig('phasings', 'values'))
    init = File.read(File.expand_path('../../../../manifests/init.pp', __dir__))
    expect(init).to include("Clone_army::Phasing $phasing = '#{schema.dig('phasings', 'default')}',")
  end

  it 'has Clone_army::Puppet_source list the helper\'s agent sources' do
    expect(enum_values.call(alias_body.call('puppet_source'))).to eq(schema.dig('puppet_sources', 'values'))
  end

  it 'has clone_army_base take every OS the helper builds' do
    require 'puppet'
    os = Puppet::Type.type(:clone_army_base).attrclass(:os).value_collection.values.map(&:to_s)
    expect(os).to eq(schema['os'])
  end

  it 'has clone_army_base take the mirrors the helper takes, and no others' do
    require 'puppet'
    type = Puppet::Type.type(:clone_army_base)
    schema.dig('base_mirror', 'valid').each { |mirror| expect(type.new(name: 'b1', mirror: mirror)[:mirror]).to eq(mirror) }
    schema.dig('base_mirror', 'invalid').each do |mirror|
      expect { type.new(name: 'b1', mirror: mirror) }.to raise_error(Puppet::ResourceError, %r{mirror must be}), mirror.inspect
    end
  end

  it 'has clone_army_base take the releases the helper takes for each OS, and no others' do
    require 'puppet'
    type = Puppet::Type.type(:clone_army_base)
    schema['base_releases'].each do |os, rule|
      rule['valid'].each { |release| expect(type.new(name: 'b1', os: os, release: release)[:release]).to eq(release) }
      rule['invalid'].each do |release|
        expect { type.new(name: 'b1', os: os, release: release) }
          .to raise_error(Puppet::ResourceError, %r{release must be}), "#{os} #{release.inspect}"
      end
    end
  end

  it 'has Clone_army::Cpu_quota and Clone_army::Memory_max take the helper\'s limits' do
    quota = schema.dig('limits', 'cpu_quota_percent')
    expect(alias_body.call('cpu_quota')).to include("Integer[#{quota['min']}, #{quota['max']}]", "|#{quota['max']})%")
    digits = schema.dig('limits', 'memory_max_digits')
    expect(alias_body.call('memory_max')).to include("Integer[1, #{'9' * digits}]", "[0-9]{0,#{digits - 1}}",
                                                     "[#{schema.dig('limits', 'memory_suffixes').join}]?")
  end

  it 'has Clone_army::Facts take the helper\'s fact names and string lengths' do
    body = alias_body.call('facts')
    expect(body).to include("{1,#{schema.dig('facts', 'max_name_length')}}",
                            "String[0, #{schema.dig('facts', 'max_string_length')}]")
  end

  it 'has the class take challenge passwords no longer than the helper does' do
    init = File.read(File.expand_path('../../../../manifests/init.pp', __dir__))
    expect(init).to include("Optional[Sensitive[String[1, #{schema['challenge_password_max_bytes']}]]] $challenge_password")
    longest = 'p' * schema['challenge_password_max_bytes']
    expect { PuppetX::CloneArmy::Secrets.validate_challenge_password('challenge_password', longest) }.not_to raise_error
    expect { PuppetX::CloneArmy::Secrets.validate_challenge_password('challenge_password', "#{longest}p") }
      .to raise_error(ArgumentError, %r{1 to #{schema['challenge_password_max_bytes']} bytes})
  end

  it 'has the classes take server ports in the helper\'s range' do
    bounds = schema.dig('ranges', 'server_port')
    ['init.pp', 'fleet.pp', 'record.pp'].each do |file|
      manifest = File.read(File.expand_path("../../../../manifests/#{file}", __dir__))
      expect(manifest).to include("Optional[Integer[#{bounds['min']}, #{bounds['max']}]] $server_port"), file
    end
  end

  it 'has the class and the clone type take ramp_up in the helper\'s range, no longer' do
    require 'puppet'
    bounds = schema.dig('ranges', 'ramp_up')
    init = File.read(File.expand_path('../../../../manifests/init.pp', __dir__))
    expect(init).to include("Integer[#{bounds['min']}, #{bounds['max']}] $ramp_up = #{bounds['default']},")
    type = Puppet::Type.type(:clone_army_clone)
    expect(type.new(name: 'c1', ramp_up: bounds['max'])[:ramp_up]).to eq(bounds['max'])
    expect { type.new(name: 'c1', ramp_up: bounds['max'] + 1) }.to raise_error(Puppet::ResourceError, %r{ramp_up})
  end

  it 'gives every integer attribute of the shape the helper\'s range' do
    PuppetX::CloneArmy::Shape::RANGES.each do |name, range|
      bounds = schema.dig('ranges', name.to_s)
      expect(range).to eq(bounds['min']..bounds['max'])
    end
  end

  it 'says clearly which key is missing from a broken install' do
    expect { described_class.fetch('ranges', 'nonexistent') }.to raise_error(KeyError, %r{ranges\.nonexistent})
  end
end
