# frozen_string_literal: true

# @summary The targets of a Bolt step that failed, each with its error, in one line.
#
# @api private
#
# Plan clone_army::load_test fails with it, so that its message names every
# load host a step failed on and why: it reads results as `$results.to_data`
# gives them (`target`, `status`, and `value` with Bolt's `_error`).
Puppet::Functions.create_function(:'clone_army::failed_targets') do
  # @param results
  #   A step's results, `$result_set.to_data`.
  # @return [String] `target: message` of each failed one, joined by `; `.
  # @example
  #   clone_army::failed_targets($ramped.to_data)  # 'load1: step must be a positive integer; got 0'
  dispatch :failed_targets do
    param 'Array[Hash]', :results
    return_type 'String'
  end

  def failed_targets(results)
    failed = results.reject { |result| result['status'] == 'success' }
    failed.map { |result| "#{result['target']}: #{message(result['value'])}" }.join('; ')
  end

  def message(value)
    (value.is_a?(Hash) && value.dig('_error', 'msg')) || 'failed without a message'
  end
end
