# frozen_string_literal: true

require_relative 'schema'

module PuppetX
  module CloneArmy
    # How many clones a host's memory holds, for each run mode: the
    # `clone_army` fact and the `clone_army::capacity` function (the class's
    # fallback when the fact is missing) both use it, with the helper's
    # figures (`clone-army schema`, `capacity`), which `clone-army host
    # limits` also reports from:
    #
    #   capacity = max(0, floor((total_bytes - RESERVE_BYTES) / COST_BYTES[mode]))
    module Capacity
      # Left to the OS and the host's own Puppet agent.
      RESERVE_BYTES = Schema.fetch('capacity', 'reserve_bytes')

      # What one clone is given, per run mode.
      COST_BYTES = Schema.fetch('capacity', 'cost_bytes')

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
