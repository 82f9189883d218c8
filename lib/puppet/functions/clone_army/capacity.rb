# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/capacity'

# @summary How many clones of a run mode a host's memory holds.
#
# `max(0, floor((total_bytes - 2 GiB) / cost))`, where the cost is 100 MiB
# per clone in `daemon` mode (idle agent daemon ~68 MB PSS plus a run's
# peak) and 20 MiB in `timer` mode (~10 MB idle plus a tenth of a ~100 MB
# run peak: phased runs overlap about 10 %). `apply` and `manual` clones cost
# what `timer` ones do: ask for `timer`. The same figures as the memory bound
# of `clone_army::fleet_capacity` (which class clone_army sizes its fleet
# with), of the `clone_army` fact's `capacity` and of `clone-army host
# limits`: all read them from the helper's rules (`clone-army schema`, which
# the module ships as `lib/puppet_x/clone_army/schema.json`). Nothing in the
# module calls this function: it is the memory bound alone, for manifests of
# your own.
Puppet::Functions.create_function(:'clone_army::capacity') do
  # @param total_bytes
  #   The host's total memory, e.g. `$facts['memory']['system']['total_bytes']`.
  # @param run_mode
  #   The run mode whose per-clone cost applies.
  # @return [Integer] The number of clones, never below 0.
  # @example 24 GiB of daemon-mode clones
  #   clone_army::capacity($facts['memory']['system']['total_bytes'], 'daemon')  # 225 on 24 GiB
  dispatch :capacity do
    param 'Integer[0]', :total_bytes
    param 'Enum[daemon, timer]', :run_mode
    return_type 'Integer[0]'
  end

  def capacity(total_bytes, run_mode)
    PuppetX::CloneArmy::Capacity.clones_for(total_bytes, run_mode)
  end
end
