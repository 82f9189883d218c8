# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/capacity'

# @summary How many clones a host holds in a run mode: the smaller of its memory and CPU bounds.
#
# The memory bound is `clone_army::capacity`'s (`apply` and `manual` clones
# cost what `timer` ones do). The CPU bound keeps one interval's runs within
# a share of the cores: `floor(cpu_share_percent / 100 * cores * runinterval /
# cpu_seconds_per_run)`. `manual` clones run only when asked, so memory alone
# bounds them. `bound` names the smaller bound (`memory` on a tie) and
# `reason` says how it was reckoned. Undef `cpu_share_percent` is 75 and undef
# `cpu_seconds_per_run` 2.5 (the helper's figures); undef `cores` is one core
# (the smallest host, so the CPU bound errs low), and the reason says
# "1 core (assumed: no processor count)". A `cpu_seconds_per_run` of 0 or less
# is refused. Class clone_army takes its default `num_clones` and its check
# from this; call it to size a fleet of your own the same way.
Puppet::Functions.create_function(:'clone_army::fleet_capacity') do
  # @param total_bytes
  #   The host's total memory, e.g. `$facts['memory']['system']['total_bytes']`.
  # @param cores
  #   The host's processors, e.g. `$facts['processors']['count']`; undef: one core (the
  #   smallest host, so the CPU bound errs low), and the reason says so.
  # @param run_mode
  #   The clones' run mode.
  # @param runinterval
  #   Seconds between two runs of one clone.
  # @param cpu_share_percent
  #   The share of all cores the fleet's runs may take, in percent; undef: 75.
  # @param cpu_seconds_per_run
  #   CPU-seconds one agent run takes in a clone; undef: 2.5, the benchmark's figure
  #   for the module's own workload.
  # @return
  #   `clones` (the smaller bound), `bound` (`memory` or `cpu`; memory on a tie),
  #   both bounds, `memory` and `cpu` (undef for `manual`), and `reason`, how the
  #   smaller one was reckoned.
  # @example The 2-core, 24 GiB host at the defaults
  #   clone_army::fleet_capacity(24 * 1024 * 1024 * 1024, 2, 'timer', 1800, 75, 2.5)
  #   # => { 'clones' => 1080, 'bound' => 'cpu', 'memory' => 1126, 'cpu' => 1080,
  #   #      'reason' => 'one run every 1800 s a clone at 2.5 CPU-s a run within 75 % of 2 cores' }
  # @example The same host at a 600 s interval, the helper's figures left undef
  #   clone_army::fleet_capacity(24 * 1024 * 1024 * 1024, 2, 'timer', 600, undef, undef)
  #   # => { 'clones' => 360, 'bound' => 'cpu', 'memory' => 1126, 'cpu' => 360,
  #   #      'reason' => 'one run every 600 s a clone at 2.5 CPU-s a run within 75 % of 2 cores' }
  dispatch :fleet_capacity do
    param 'Integer[0]', :total_bytes
    param 'Optional[Integer[1]]', :cores
    param 'Enum[daemon, timer, apply, manual]', :run_mode
    param 'Integer[1]', :runinterval
    param 'Optional[Integer[1, 100]]', :cpu_share_percent
    param 'Optional[Numeric]', :cpu_seconds_per_run
    return_type 'Struct[{clones => Integer[0], bound => Enum[memory, cpu], memory => Integer[0], ' \
                'cpu => Optional[Integer[0]], reason => String}]'
  end

  # One positional parameter per dispatch param: that is how Puppet calls it.
  # rubocop:disable Metrics/ParameterLists
  def fleet_capacity(total_bytes, cores, run_mode, runinterval, cpu_share_percent, cpu_seconds_per_run)
    capacity = PuppetX::CloneArmy::Capacity
    capacity.fleet(total_bytes: total_bytes, cores: cores, run_mode: run_mode, runinterval: runinterval,
                   share_percent: cpu_share_percent || capacity::CPU_SHARE_PERCENT,
                   cpu_seconds: cpu_seconds_per_run || capacity::CPU_SECONDS_PER_RUN)
  end
  # rubocop:enable Metrics/ParameterLists
end
