# frozen_string_literal: true

require_relative 'schema'

module PuppetX
  module CloneArmy
    # How many clones a host holds, bounded by its memory and by its CPU. The
    # `clone_army` fact, the `clone_army::capacity` and
    # `clone_army::fleet_capacity` functions (the class's default `num_clones`
    # and its check) all compute here, from the helper's figures (`clone-army
    # schema`, `capacity`; `clone-army host limits` reports the memory bound
    # from the same figures):
    #
    #   memory = max(0, floor((total_bytes - RESERVE_BYTES) / COST_BYTES[mode]))
    #   cpu    = floor(share% / 100 * cores * runinterval / CPU_SECONDS_PER_RUN)
    #   capacity = min(memory, cpu)
    #
    # The CPU bound keeps the runs of one interval within a share of the cores:
    # N clones run N times per interval, each run taking CPU_SECONDS_PER_RUN.
    # A `manual` clone runs only when asked, so only memory bounds it. A host
    # whose core count is not known is taken as ASSUMED_CORES.
    module Capacity
      # Left to the OS and the host's own Puppet agent.
      RESERVE_BYTES = Schema.fetch('capacity', 'reserve_bytes')

      # What one clone is given, per run mode.
      COST_BYTES = Schema.fetch('capacity', 'cost_bytes')

      MODES = COST_BYTES.keys.freeze

      MIB = 1024 * 1024

      # CPU-seconds of one agent run in a clone, as measured for the module's workload.
      CPU_SECONDS_PER_RUN = Schema.fetch('capacity', 'cpu_seconds_per_run')

      # The share of the cores the fleet's runs may take when none is given.
      CPU_SHARE_PERCENT = Schema.default('cpu_share_percent')

      # The interval the fact assumes: the class's and the helper's default.
      RUNINTERVAL = Schema.default('runinterval')

      # The cores of a host whose facts do not say: the smallest host, so that
      # the CPU bound errs low rather than overcommit it.
      ASSUMED_CORES = 1

      # Run modes whose clones run on their own every interval.
      PERIODIC_MODES = ['daemon', 'timer', 'apply'].freeze

      # The number of clones of run mode `mode` that `total_bytes` of memory
      # holds; 0 when the host has no more than the reserve.
      def self.clones_for(total_bytes, mode)
        cost = COST_BYTES.fetch(mode.to_s) do
          raise ArgumentError, "unknown run mode #{mode.inspect}; expected one of #{MODES.join(', ')}"
        end
        [0, (Integer(total_bytes) - RESERVE_BYTES) / cost].max
      end

      # { 'daemon' => N, 'timer' => M } for `total_bytes` of memory.
      def self.for_memory(total_bytes)
        MODES.to_h { |mode| [mode, clones_for(total_bytes, mode)] }
      end

      # The number of clones whose runs, one per `runinterval` seconds each,
      # fit in `share_percent` of `cores` at `cpu_seconds` a run.
      def self.cpu_bound(cores:, runinterval:, share_percent: CPU_SHARE_PERCENT, cpu_seconds: CPU_SECONDS_PER_RUN)
        raise ArgumentError, "cpu_seconds_per_run must be above 0, not #{cpu_seconds}" unless cpu_seconds.positive?

        (Rational(share_percent, 100) * Integer(cores) * Integer(runinterval) / Rational(cpu_seconds.to_s)).floor
      end

      # Both bounds for clones running the agent in `run_mode` (daemon, timer,
      # apply or manual), the smaller one, which it is, and how it was reckoned:
      #   { 'clones' => 1080, 'bound' => 'cpu', 'memory' => 1126, 'cpu' => 1080,
      #     'reason' => 'one run every 1800 s a clone at 2.5 CPU-s a run within 75 % of 2 cores' }
      # `cpu` is nil for `manual`, which memory alone bounds. On a tie memory is
      # named. `cores` nil: ASSUMED_CORES, and the reason says so.
      def self.fleet(total_bytes:, cores:, run_mode:, runinterval: RUNINTERVAL,
                     share_percent: CPU_SHARE_PERCENT, cpu_seconds: CPU_SECONDS_PER_RUN)
        counted = cores ? "#{cores} cores" : "#{ASSUMED_CORES} core (assumed: no processor count)"
        cores ||= ASSUMED_CORES
        cost_mode = run_mode.to_s == 'daemon' ? 'daemon' : 'timer'
        memory = clones_for(total_bytes, cost_mode)
        cpu = if PERIODIC_MODES.include?(run_mode.to_s)
                cpu_bound(cores: cores, runinterval: runinterval, share_percent: share_percent, cpu_seconds: cpu_seconds)
              end
        if cpu && cpu < memory
          { 'clones' => cpu, 'bound' => 'cpu', 'memory' => memory, 'cpu' => cpu,
            'reason' => "one run every #{runinterval} s a clone at #{cpu_seconds} CPU-s a run " \
                        "within #{share_percent} % of #{counted}" }
        else
          { 'clones' => memory, 'bound' => 'memory', 'memory' => memory, 'cpu' => cpu,
            'reason' => "total memory minus #{RESERVE_BYTES / MIB} MiB, divided by " \
                        "#{COST_BYTES.fetch(cost_mode) / MIB} MiB a clone in #{run_mode} mode" }
        end
      end
    end
  end
end
