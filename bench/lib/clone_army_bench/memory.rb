# frozen_string_literal: true

require_relative 'pss'
require_relative 'stats'

module CloneArmyBench
  # The fleet's memory, for both benches: idle memory of K of clone1..N with no
  # agent run at the moment, the PSS of all N, and the machine's memory growth.
  module Memory
    # MiB of an idle timer-mode clone.
    PSS_TIMER_TARGET = 8

    module_function

    # KiB of this machine's memory in use (MemTotal - MemAvailable).
    def used_kib(meminfo = File.read('/proc/meminfo'))
      fields = meminfo.each_line.to_h do |l|
        k, v = l.split
        [k.to_s.delete_suffix(':'), v.to_i]
      end
      fields.fetch('MemTotal') - fields.fetch('MemAvailable')
    end

    # The figures of clone1..count: mem0 is the KiB in use before the fleet.
    def figures(bench, mem0, count)
      record = bench.record
      File.write(record['pss-timer'], bench.host.inside_sh!('pss', *(1..count).map { |i| "clone#{i}" }))
      all = Pss.parse(File.read(record['pss-timer']))
      idle_figure(bench, all)
      total = Pss.total_mib(all)
      bench.fig('fleet_pss', "large fleet: PSS of all #{count} clones", total,
                unit: 'MiB', note: "#{Stats.fixed(total.to_f / count)} MiB per clone, runs in progress included")
      bench.fig('fleet_mem', 'large fleet: machine memory used, growth since before the fleet',
                Integer(Stats.fixed((used_kib - mem0) / 1024.0, 0)),
                unit: 'MiB', note: 'MemTotal − MemAvailable; the machine is shared, so other work is in it')
    end

    # The idle memory of the first K clones with no agent process (kept as pss-timer-idle).
    def idle_figure(bench, all)
      idle = Pss.idle(all, bench.settings.k)
      File.write(bench.record['pss-timer-idle'], Pss.lines(idle))
      avg = Pss.average_mib(idle)
      bench.fig('pss_timer', "idle memory per clone, timer mode (PSS, avg of #{bench.settings.k})", avg,
                unit: 'MiB', target: "≤ #{PSS_TIMER_TARGET}", met: bench.met_le(avg, PSS_TIMER_TARGET), note: Pss.note(idle))
    end
  end
end
