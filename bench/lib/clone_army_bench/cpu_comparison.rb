# frozen_string_literal: true

require_relative 'readings'
require_relative 'stats'

module CloneArmyBench
  # CPU per agent run: `puppet agent -t` in the manual-mode clone benchcpu (its
  # unit's cgroup's usage_usec), on the plain sandbox host (the same agent and
  # plugins from the same server, no fleet; a transient systemd-run unit), and on
  # the load host itself, whose clone_army fact lists the whole fleet at every run
  # (so it is shown, not compared); CPU_REPS each, alternating, after a warm-up each.
  class CpuComparison
    CLONE = 'benchcpu'
    # At most this ratio of medians, clone over plain host.
    TARGET = 1.05
    AGENT_RUN = ['clone-army', 'exec', '--clone', CLONE, '--timeout', '300', '--', 'puppet', 'agent', '-t', '--color=false'].freeze

    def initialize(bench)
      @bench = bench
      @host = bench.host
      @reps = bench.settings.cpu_reps
    end

    def run
      @bench.log("booting the plain sandbox host #{BenchHost::PLAIN} (no fleet) for the CPU comparison")
      @host.sandbox!('up', BenchHost::PLAIN)
      runs = measure
      @host.sandbox!('down', BenchHost::PLAIN)
      figures(runs)
    end

    private

    def measure
      @bench.log("CPU per agent run: warm-up (certificates), then #{@reps} runs each, alternating")
      @host.run('bash', BenchHost::INSIDE, 'host-run', sandbox: BenchHost::PLAIN)
      @host.run('bash', BenchHost::INSIDE, 'host-run')
      @host.run!(*AGENT_RUN)
      runs = { clone: [], plain: [], host: [] }
      @reps.times do |i|
        c = clone_run
        p = host_run(BenchHost::PLAIN)
        h = host_run(BenchHost::NAME)
        [[:clone, c], [:plain, p], [:host, h]].each { |side, v| runs[side] << v }
        @bench.log("run #{i + 1}: clone #{c} CPU-s, plain host #{p} CPU-s, load host #{h} CPU-s")
      end
      runs
    end

    # One agent run in the clone: the CPU its unit's cgroup used over it.
    def clone_run
      before = cpu_usec
      answer = @host.run!(*AGENT_RUN)
      after = cpu_usec
      raise BenchHost::Failed, "agent run in #{CLONE} did not run" unless Readings.exec_ran?(answer)

      Stats.fixed((after - before) / 1e6)
    end

    def cpu_usec
      Readings.usec(@host.inside_sh!('cpu-usec', CLONE), "usage_usec of #{CLONE}")
    end

    # One agent run on a sandbox host (inside.sh host-run prints its CPU seconds).
    def host_run(name)
      text = @host.inside_sh!('host-run', sandbox: name)
      Readings.numbers(text, "the agent run on #{name}")
      text.strip
    end

    def figures(runs)
      med = runs.transform_values { |v| Stats.fixed(Stats.median(v)) }
      reps = @reps
      @bench.fig('cpu_clone', "CPU per agent run in a clone (median of #{reps})", Float(med[:clone]),
                 unit: 'CPU-s', note: Stats.quote(runs[:clone]))
      @bench.fig('cpu_plain', "CPU per agent run on a plain sandbox host, no fleet (median of #{reps})", Float(med[:plain]),
                 unit: 'CPU-s', note: Stats.quote(runs[:plain]))
      @bench.fig('cpu_host', "CPU per agent run on the load host, its fact listing the fleet (median of #{reps})", Float(med[:host]),
                 unit: 'CPU-s', note: Stats.quote(runs[:host]))
      ratio, note = Stats.ratio(med[:clone], med[:plain], ['clone', 'plain'])
      ratio = Float(Stats.fixed(ratio))
      @bench.fig('cpu_ratio', 'CPU per run, clone / plain host', ratio,
                 unit: '', target: "≤ #{TARGET}", met: @bench.met_le(ratio, TARGET), note: "medians: #{note} CPU-s")
    end
  end
end
