# frozen_string_literal: true

require_relative 'stats'

module CloneArmyBench
  # Memory of clones, from inside.sh's `pss` lines: "<clone> <PSS KiB> <processes>
  # <agent processes>", one a clone.
  module Pss
    Reading = Struct.new(:name, :kib, :procs, :agents)

    module_function

    def parse(text)
      text.each_line.map(&:split).reject(&:empty?).map do |clone, kib, procs, agents|
        Reading.new(clone, Integer(kib), Integer(procs), Integer(agents || 0))
      end
    end

    # The first k clones with no agent process: a clone mid-run is not idle.
    def idle(readings, count)
      readings.select { |r| r.agents.zero? }.first(count)
    end

    # The mean PSS in MiB (one decimal), or nil with no clone.
    def average_mib(readings)
      return nil if readings.empty?

      Float(Stats.fixed(readings.sum(&:kib) / readings.size.to_f / 1024, 1))
    end

    # The sum in whole MiB (rounded as printf rounds, half to even, as the
    # committed results were).
    def total_mib(readings)
      Integer(Stats.fixed(readings.sum(&:kib) / 1024.0, 0))
    end

    def note(readings)
      readings.map { |r| "#{r.name} #{Stats.fixed(r.kib / 1024.0, 1)} MiB/#{r.procs} procs" }.join(', ')
    end

    # The clone_N lines, as inside.sh prints them (to keep the idle ones apart).
    def lines(readings)
      readings.map { |r| "#{r.name} #{r.kib} #{r.procs} #{r.agents}\n" }.join
    end
  end
end
