# frozen_string_literal: true

# @summary The load hosts whose clones have not all checked in yet, each with what it waits for.
#
# @api private
#
# Plan clone_army::load_test waits for the fleet with it: it reads the
# results of the `clone_army::report` task (a live report, as
# `$results.to_data` gives them: `target`, `status` and `value`, the task's
# JSON) and names each load host that does not yet have `num_clones` clones,
# every one with a last run that `succeeded` (a check-in, as the report
# counts one: docs/PROTOCOL.md), or whose report failed. An empty Hash: every
# clone of every load host has checked in.
Puppet::Functions.create_function(:'clone_army::checkin_pending') do
  # @param results
  #   The report task's results, `run_task('clone_army::report', ...).to_data`.
  # @param num_clones
  #   The clones each load host is to have.
  # @return [Hash[String, String]] Each load host still waited for, with why.
  # @example
  #   clone_army::checkin_pending($reports.to_data, 10)  # {'load1' => '3 of 10 clones not checked in: clone8 (never), ...'}
  dispatch :checkin_pending do
    param 'Array[Hash]', :results
    param 'Integer[0]', :num_clones
    return_type 'Hash[String, String]'
  end

  def checkin_pending(results, num_clones)
    results.to_h { |result| [result['target'].to_s, waiting_for(result, num_clones)] }.compact
  end

  # What `result`'s load host waits for, nil when nothing.
  def waiting_for(result, num_clones)
    value = result['value'].is_a?(Hash) ? result['value'] : {}
    return "its report failed: #{value.dig('_error', 'msg') || 'no answer'}" unless result['status'] == 'success'

    clones = value.dig('result', 'clones')
    return 'its report lists no clones' unless clones.is_a?(Array) && clones.all?(Hash)
    return "#{clones.size} of #{num_clones} clones made" if clones.size < num_clones

    not_checked_in(clones)
  end

  # The clones without a successful last run, the first five by name (a
  # fleet of thousands is summed up); nil when there is none.
  def not_checked_in(clones)
    waiting = clones.reject { |clone| clone['succeeded'] == true }
    return nil if waiting.empty?

    named = waiting.first(5).map { |clone| "#{clone['name']} (#{clone['status']})" }
    named << "#{waiting.size - 5} more" if waiting.size > 5
    "#{waiting.size} of #{clones.size} clones not checked in: #{named.join(', ')}"
  end
end
