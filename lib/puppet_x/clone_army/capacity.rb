# frozen_string_literal: true

module PuppetX
  module CloneArmy
    # How many clones a host's memory holds, for each run mode. The one place
    # the figures live: the `clone_army` fact and the `clone_army::capacity`
    # function (the class's fallback when the fact is missing) both use it.
    #
    #   capacity = max(0, floor((total_bytes - RESERVE_BYTES) / COST_BYTES[mode]))
    #
    # Figures measured on Debian 12 with Puppet 7.23 (README, "Measured here"): an idle
    # agent daemon in a clone is about 58-68 MB PSS, a booted clone without it
    # (systemd, journald, dbus, logind) about 9 MB, its systemd-nspawn
    # supervisor about 2.7 MB; one agent run peaks at about 100 MB.
    module Capacity
      MIB = 1024 * 1024
      GIB = 1024 * MIB

      # Left to the OS and the host's own Puppet agent.
      RESERVE_BYTES = 2 * GIB

      # What one clone is given, per run mode.
      COST_BYTES = {
        # The idle agent daemon (~68 MB PSS with the clone around it) plus
        # what a run takes on top of it, up to its ~100 MB peak: every clone
        # may run at once.
        'daemon' => 100 * MIB,
        # No resident agent: ~10 MB PSS idle per clone, plus a tenth of a
        # ~100 MB run peak, since phased runs overlap about 10 % (one clone
        # in ten is running at a time). `manual` clones cost the same and
        # count as `timer` (the class maps them).
        'timer' => 20 * MIB,
      }.freeze

      MODES = COST_BYTES.keys.freeze

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
    end
  end
end
