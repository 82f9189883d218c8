# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/capacity'

# @summary How many clones of a run mode a host's memory holds.
#
# `max(0, floor((total_bytes - 2 GiB) / cost))`, where the cost is 100 MiB
# per clone in `daemon` mode (idle agent daemon ~68 MB PSS plus a run's
# peak) and 20 MiB in `timer` mode (~10 MB idle plus a tenth of a ~100 MB
# run peak: phased runs overlap about 10 %; `manual` costs the same). The same figures as
# the `clone_army` fact's `capacity`, which class clone_army prefers; this is
# its fallback when the fact is missing (a host without pluginsync, specs).
Puppet::Functions.create_function(:'clone_army::capacity') do
  # @param total_bytes
  #   The host's total memory, e.g. `$facts['memory']['system']['total_bytes']`.
  # @param run_mode
  #   The run mode whose per-clone cost applies.
  # @return [Integer] The number of clones, never below 0.
  # @example
  #   clone_army::capacity($facts['memory']['system']['total_bytes'], 'daemon')
  dispatch :capacity do
    param 'Integer[0]', :total_bytes
    param 'Enum[daemon, timer]', :run_mode
    return_type 'Integer[0]'
  end

  def capacity(total_bytes, run_mode)
    PuppetX::CloneArmy::Capacity.clones_for(total_bytes, run_mode)
  end
end
