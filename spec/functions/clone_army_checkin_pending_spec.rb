# frozen_string_literal: true

require 'spec_helper'

# The report task's results as plan clone_army::load_test reads them
# (`$results.to_data`): a live report's clones, each with `succeeded`.
describe 'clone_army::checkin_pending' do
  def clone(name, status)
    { 'name' => name, 'status' => status, 'succeeded' => ['changed', 'unchanged', 'would-change'].include?(status) }
  end

  def reported(target, clones)
    { 'target' => target, 'action' => 'task', 'object' => 'clone_army::report', 'status' => 'success',
      'value' => { 'protocol' => 2, 'ok' => true, 'result' => { 'clones' => clones } } }
  end

  it 'is empty when every clone of every load host has checked in' do
    results = [reported('load1', [clone('clone1', 'changed'), clone('clone2', 'unchanged')]),
               reported('load2', [clone('clone1', 'would-change'), clone('clone2', 'changed')])]
    is_expected.to run.with_params(results, 2).and_return({})
  end

  it 'names each load host waited for, with its clones not checked in' do
    results = [reported('load1', [clone('clone1', 'changed'), clone('clone2', 'never'), clone('clone3', 'failed')]),
               reported('load2', [clone('clone1', 'changed'), clone('clone2', 'changed'), clone('clone3', 'changed')])]
    is_expected.to run.with_params(results, 3).and_return('load1' => '2 of 3 clones not checked in: clone2 (never), clone3 (failed)')
  end

  it 'sums up a large fleet after five clones' do
    clones = (1..8).map { |i| clone("clone#{i}", 'never') }
    is_expected.to run.with_params([reported('load1', clones)], 8).and_return(
      'load1' => '8 of 8 clones not checked in: clone1 (never), clone2 (never), clone3 (never), clone4 (never), clone5 (never), 3 more',
    )
  end

  it 'waits for clones not made yet' do
    is_expected.to run.with_params([reported('load1', [clone('clone1', 'changed')])], 4).and_return('load1' => '1 of 4 clones made')
  end

  it 'names a load host whose report failed or listed no clones' do
    failed = { 'target' => 'load1', 'status' => 'failure',
               'value' => { '_error' => { 'kind' => 'clone_army/helper-missing', 'msg' => 'the clone-army helper is not installed' } } }
    empty = { 'target' => 'load2', 'status' => 'success', 'value' => { 'protocol' => 2, 'ok' => true, 'result' => {} } }
    is_expected.to run.with_params([failed, empty], 1).and_return(
      'load1' => 'its report failed: the clone-army helper is not installed', 'load2' => 'its report lists no clones',
    )
  end
end
