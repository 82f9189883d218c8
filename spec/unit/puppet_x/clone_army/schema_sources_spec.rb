# frozen_string_literal: true

require 'spec_helper'
require_relative '../../../../lib/puppet_x/clone_army/schema'

# Every bounded Integer and every Pattern written in manifests/ and types/
# (and every bounded Integer of the functions' signatures), read from the files themselves and held to the helper's schema: a range or
# pattern added there without its rule in the schema, or one that drifts from
# it, fails here. The few that are the Puppet side's own (the helper never
# sees the value) are listed with the reason.
describe 'the Puppet code\'s ranges and patterns' do
  schema = PuppetX::CloneArmy::Schema::DATA
  root = File.expand_path('../../../..', __dir__)
  sources = Dir[File.join(root, '{manifests,types}', '*.pp')].sort
  functions = Dir[File.join(root, 'lib/puppet/functions/**/*.rb')].sort

  # "Integer[1, 65535]" with both bounds written as numbers, and what it
  # bounds: the parameter after it (a function's `param '...', :name` too),
  # the fact it takes, or the type alias.
  integer_ranges = (sources + functions).flat_map do |path|
    file = path.delete_prefix("#{root}/")
    File.readlines(path).each_with_index.flat_map do |line, index|
      next [] if line.strip.start_with?('#')

      line.scan(%r{Integer\[(\d+),\s*(\d+)\]}).map do |min, max|
        name = line[%r{\]\s*\$(\w+)}, 1] || line[%r{\$facts\['(\w+)'\]}, 1] || line[%r{\Atype Clone_army::(\w+)}, 1] ||
               line[%r{\A\s*(?:optional_)?param '.*', :(\w+)}, 1]
        { where: "#{file}:#{index + 1}", name: name, min: Integer(min), max: Integer(max),
          default: line[%r{\$\w+\s*=\s*(\d+)\s*,?\s*\z}, 1]&.then { |d| Integer(d) } }
      end
    end
  end

  # The helper's range of each bounded name.
  range_of = lambda do |name|
    case name
    when 'Memory_max' then { 'min' => 1, 'max' => (10**schema.dig('limits', 'memory_max_digits')) - 1 }
    when 'Cpu_quota' then schema.dig('limits', 'cpu_quota_percent')
    when 'clone_army_agent_server_port' then schema.dig('ranges', 'server_port')
    else schema.dig('ranges', name)
    end
  end
  # The workload class's own figures: its files are resources in the clones'
  # catalog, which the helper never reads.
  puppet_only_ranges = ['static_files', 'changing_files', 'file_bytes'].freeze

  it 'finds the ranges it holds (the scan reads the files)' do
    expect(integer_ranges.map { |r| r[:name] }).to include('runinterval', 'splay', 'ramp_up', 'server_port', 'Cpu_quota')
    expect(integer_ranges.select { |r| r[:where].start_with?('lib/') }.map { |r| r[:name] }).to include('cpu_share_percent')
  end

  integer_ranges.each do |found|
    it "has #{found[:where]} (Integer[#{found[:min]}, #{found[:max]}] #{found[:name]}) say what the schema says" do
      expect(found[:name]).not_to be_nil, "#{found[:where]}: a range bounds nothing the scan can name"
      next if puppet_only_ranges.include?(found[:name])

      bounds = range_of.call(found[:name])
      expect(bounds).not_to be_nil, "#{found[:where]}: #{found[:name]} has no range in schema.json"
      expect([found[:min], found[:max]]).to eq([bounds['min'], bounds['max']])
      expect(found[:default]).to eq(bounds['default']) if found[:default] && bounds.key?('default')
    end
  end

  # Each Pattern[/.../] of the type aliases, by alias.
  patterns = sources.grep(%r{/types/}).to_h do |path|
    body = File.read(path)[%r{^type Clone_army::(\w+) = (.*)$}, 2]
    [File.basename(path, '.pp'), body.to_s.scan(%r{Pattern\[/(.*?)/\]}).flatten]
  end

  # How the schema says each alias's pattern: the same text, with Ruby's
  # anchors for the end (\z, where the schema's portable text says $).
  anchored = lambda do |pattern|
    body = pattern.delete_prefix('^').delete_suffix('$').gsub('/', '\/').gsub(%r{(?<!\\)\$}, '\\z')
    "\\A#{body}\\z"
  end
  schema_patterns = {
    'name' => anchored.call(schema.dig('names', 'clone', 'pattern')),
    'twin_node' => anchored.call(schema.dig('names', 'twin_node', 'pattern')),
    'apply_source' => anchored.call(schema.dig('apply_source', 'pattern')),
    'crypt_hash' => anchored.call(schema.dig('crypt_hash', 'pattern')),
    'facts' => anchored.call(schema.dig('facts', 'name_pattern')),
    'group_key' => anchored.call(schema.dig('group_key', 'pattern')),
  }
  # Aliases whose pattern is checked on examples (the pattern is not the
  # schema's text): the hostname's adds the length look-ahead; the limits'
  # are made of figures.
  example_checks = {
    'hostname' => -> { [schema.dig('names', 'hostname', 'valid'), schema.dig('names', 'hostname', 'invalid')] },
    'memory_max' => lambda do
      digits = schema.dig('limits', 'memory_max_digits')
      suffixes = schema.dig('limits', 'memory_suffixes')
      [['1', '9' * digits] + suffixes.map { |s| "512#{s}" }, ['0', "1#{'0' * digits}", '512X', '512k', '-1']]
    end,
    'cpu_quota' => lambda do
      bounds = schema.dig('limits', 'cpu_quota_percent')
      [["#{bounds['min']}%", "#{bounds['max']}%"], ["#{bounds['min'] - 1}%", "#{bounds['max'] + 1}%", '50']]
    end,
  }
  # The Puppet side's own: values that never reach the helper as such.
  puppet_only_patterns = {
    'absolutepath' => 'a path Puppet manages (helper_path, files); the helper is not given it',
    'helper_source' => 'where Puppet fetches the helper from, before there is one',
    'sha256' => 'the checksum Puppet verifies the fetched helper against',
    'selinux_context' => 'the file context Puppet gives the helper',
    'service_address' => 'an address the class and the report task hand on (PuppetX::CloneArmy::ServiceAddress holds ' \
                         'them to it); the helper\'s own URL rule checks it again',
    'timeline_path' => 'the recorder\'s file, created by Puppet before the helper writes it',
  }

  patterns.each do |alias_name, found|
    next if found.empty?

    it "has Clone_army::#{alias_name.capitalize}'s pattern follow the schema" do
      if schema_patterns.key?(alias_name)
        expect(found).to eq([schema_patterns[alias_name]])
      elsif example_checks.key?(alias_name)
        valid, invalid = example_checks[alias_name].call
        regexps = found.map { |pattern| Regexp.new(pattern) }
        valid.each { |v| expect(regexps.any? { |r| r.match?(v) }).to be(true), "#{alias_name} refuses #{v.inspect}" }
        invalid.each { |v| expect(regexps.none? { |r| r.match?(v) }).to be(true), "#{alias_name} takes #{v.inspect}" }
      else
        expect(puppet_only_patterns).to have_key(alias_name),
                                        "types/#{alias_name}.pp has a Pattern the schema does not hold"
      end
    end
  end

  it 'has Clone_army::Twins offer the ways of dealing and naming twins that PuppetX::CloneArmy::Twins knows' do
    require_relative '../../../../lib/puppet_x/clone_army/twins'
    body = File.read(File.join(root, 'types/twins.pp'))
    enum = ->(key) { body[%r{'#{key}'\]\s*=> Enum\[([^\]]*)\]}, 1].scan(%r{'([^']*)'}).flatten }
    expect(enum.call('assign')).to eq(PuppetX::CloneArmy::Twins::ASSIGNMENTS)
    expect(enum.call('certnames')).to eq(PuppetX::CloneArmy::Twins::CERTNAME_SCHEMES)
  end

  it 'has the crypt hash alias take what the helper takes and refuse what it refuses' do
    alias_pattern = Regexp.new(patterns.fetch('crypt_hash').first)
    schema.dig('crypt_hash', 'valid').each { |hash| expect(hash).to match(alias_pattern) }
    schema.dig('crypt_hash', 'invalid').each { |hash| expect(hash).not_to match(alias_pattern) }
  end

  it 'has the group key alias take what the helper takes and refuse what it refuses' do
    alias_pattern = Regexp.new(patterns.fetch('group_key').first)
    schema.dig('group_key', 'valid').each { |key| expect(key).to match(alias_pattern) }
    schema.dig('group_key', 'invalid').each { |key| expect(key).not_to match(alias_pattern) }
  end

  it 'has the class install the helper where the tasks and providers run it' do
    init = File.read(File.join(root, 'manifests', 'init.pp'))
    expect(init).to include("Clone_army::Absolutepath $helper_path = '#{schema['helper_path']}',")
  end

  # A task's integer parameter against the helper's range of the same name
  # (`exec_timeout` for exec's `timeout`): Bolt checks the type before the
  # task runs, so a looser one lets through what the helper refuses.
  it 'has the tasks take integers in the helper\'s ranges' do
    checked = Dir[File.join(root, 'tasks', '*.json')].sort.flat_map do |file|
      task = File.basename(file, '.json')
      JSON.parse(File.read(file)).fetch('parameters').filter_map do |name, parameter|
        bounds = schema.dig('ranges', "#{task}_#{name}")
        next unless bounds

        expect(parameter['type']).to eq("Optional[Integer[#{bounds['min']}, #{bounds['max']}]]"), "#{task} #{name}"
        "#{task}_#{name}"
      end
    end
    expect(checked).to include('exec_concurrency', 'exec_timeout')
  end

  it 'has the report task take the helper\'s report formats' do
    task = JSON.parse(File.read(File.join(root, 'tasks', 'report.json')))
    formats = task.dig('parameters', 'format', 'type')[%r{Enum\[([^\]]*)\]}, 1].split(',').map(&:strip)
    expect(formats).to match_array(schema.dig('report_formats', 'live') | schema.dig('report_formats', 'recorded'))
  end
end
