# frozen_string_literal: true

require 'spec_helper'
require 'json'

# Plan clone_army::load_test cannot run here (Bolt is not installable), so
# its pieces are held to what they call: parsed with Puppet's own parser as
# Bolt parses plans (tasks on), each `run_task` of this module's tasks held
# to the task's metadata, and its parameters to its documentation.
describe 'plan clone_army::load_test' do
  root = File.expand_path('../..', __dir__)
  path = File.join(root, 'plans', 'load_test.pp')
  model = Puppet::Pops::Model

  # The plan's AST, parsed with tasks enabled (a plan does not parse without).
  program = lambda do
    Puppet[:tasks] = true
    Puppet::Pops::Parser::EvaluatingParser.new.parse_file(path)
  end
  # Every node of `node`'s tree that is a `klass`.
  nodes = lambda do |node, klass|
    found = []
    node._pcore_all_contents([]) { |element| found << element if element.is_a?(klass) }
    found
  end
  # The keys of every literal hash in `argument` (a hash, or hashes added
  # together), with the value of each literal.
  literal_keys = lambda do |argument|
    hashes = argument.is_a?(model::LiteralHash) ? [argument] : nodes.call(argument, model::LiteralHash)
    hashes.flat_map(&:entries).to_h { |entry| [entry.key.value, entry.value] }
  end
  task_metadata = ->(task) { JSON.parse(File.read(File.join(root, 'tasks', "#{task}.json"))) }

  let(:plan) { program.call.definitions.first }
  let(:calls) { nodes.call(program.call, model::CallNamedFunctionExpression) }
  let(:run_tasks) { calls.select { |call| call.functor_expr.value == 'run_task' } }
  let(:doc) { File.read(path)[%r{\A(#.*\n)+}] }

  after(:each) { Puppet[:tasks] = false }

  it 'parses as a plan named clone_army::load_test' do
    expect(plan).to be_a(model::PlanDefinition)
    expect(plan.name).to eq('clone_army::load_test')
  end

  it 'runs the report, fleet and ramp tasks of this module, each by its literal name' do
    names = run_tasks.map { |call| call.arguments.first }
    expect(names).to all(be_a(model::LiteralString))
    expect(names.map(&:value).uniq).to contain_exactly('clone_army::report', 'clone_army::fleet', 'clone_army::ramp')
    names.map(&:value).uniq.each do |name|
      expect(File.file?(File.join(root, 'tasks', "#{name.delete_prefix('clone_army::')}.json"))).to be(true), name
    end
  end

  it 'gives each task only parameters its metadata declares, literal values of their types' do
    run_tasks.each do |call|
      task = call.arguments.first.value.delete_prefix('clone_army::')
      declared = task_metadata.call(task)['parameters']
      params = literal_keys.call(call.arguments[2]).reject { |key, _| key.start_with?('_') }
      expect(params.keys - declared.keys).to eq([]), "run_task('clone_army::#{task}') gives #{params.keys - declared.keys}"
      params.each do |key, value|
        next unless value.is_a?(model::LiteralString)

        type = Puppet::Pops::Types::TypeParser.singleton.parse(declared.fetch(key)['type'])
        expect(type.instance?(value.value)).to be(true), "#{task}: #{key} => #{value.value.inspect}"
      end
    end
  end

  it 'catches the errors of every step it reports on itself' do
    (run_tasks + calls.select { |call| call.functor_expr.value == 'download_file' }).each do |call|
      expect(literal_keys.call(call.arguments.last)).to include('_catch_errors'), call.functor_expr.value
    end
  end

  it 'calls only the documented Bolt plan functions and functions of this module that exist' do
    bolt = ['apply_prep', 'run_task', 'ctrl::do_until', 'ctrl::sleep', 'download_file', 'fail_plan', 'get_targets', 'out::message']
    core = ['hash', 'return', 'timestamp']
    called = calls.map { |call| call.functor_expr.value }.uniq
    ours, others = called.partition { |name| name.start_with?('clone_army::') }
    expect(others - bolt - core).to eq([])
    ours.each do |name|
      expect(File.file?(File.join(root, 'lib/puppet/functions/clone_army', "#{name.delete_prefix('clone_army::')}.rb"))).to be(true), name
    end
    do_until = calls.find { |call| call.functor_expr.value == 'ctrl::do_until' }
    expect(literal_keys.call(do_until.arguments.first).keys).to contain_exactly('limit', 'interval')
  end

  it 'fails with kinds of its own' do
    calls.select { |call| call.functor_expr.value == 'fail_plan' }.each do |call|
      expect(call.arguments[1].value).to start_with('clone_army/')
    end
  end

  it 'documents every parameter, each with an example, and no other' do
    params = plan.parameters.map(&:name)
    expect(params).to eq(['targets', 'server', 'num_clones', 'runinterval', 'mode', 'duration', 'ramp', 'class_params',
                          'checkin_timeout', 'checkin_poll', 'destination'])
    documented = doc.scan(%r{^# @param (\w+)$}).flatten
    expect(documented).to eq(params)
    params.each do |param|
      entry = doc[%r{^# @param #{param}\n((?:#   .*\n)+)}, 1]
      expect(entry).to match(%r{Example: `#{param} => }), param
    end
    expect(doc).to match(%r{^# @summary \S}).and match(%r{^# @example \S})
  end

  # What the plan says of class clone_army, as init.pp says it.
  describe 'beside class clone_army' do
    init = File.read(File.join(root, 'manifests', 'init.pp'))
    source = File.read(path)

    it 'takes server and runinterval as the class takes them' do
      type_of = ->(text, param) { text[%r{^\s+(?:Optional\[)?([^$\n]+?)\]?\s+\$#{param}\b}, 1] }
      expect(type_of.call(source, 'server')).to eq(type_of.call(init, 'server'))
      expect(source).to include("#{init[%r{^\s+(Integer\[[^\]]+\] \$runinterval = \d+),$}, 1]},")
    end

    it 'reads the recorder\'s timeline where the class writes it by default' do
      default = init[%r{^\s+Clone_army::Timeline_path \$record_file = '([^']+)',$}, 1]
      expect(default).not_to be_nil
      expect(source).to include("undef   => '#{default}',")
    end
  end
end
