# frozen_string_literal: true

require 'shellwords'
require_relative '../../../lib/puppet_x/clone_army/schema'
require_relative 'readings'
require_relative 'stats'

module CloneArmyBench
  # CPU per agent run of the module's workload (clone_army::workload, given by the
  # bench server's site.pp to the clone benchcpu and to the plain host alone):
  # `puppet agent -t` in the manual-mode clone benchcpu (its unit's cgroup's
  # usage_usec), with the base's fact cache and with its config set aside; on
  # the plain sandbox host (the same agent and plugins from the same server, no
  # fleet, no fact cache; a transient systemd-run unit); and on the load host
  # itself, whose clone_army fact lists the whole fleet at every run (so it is
  # shown, not compared). CPU_REPS each, alternating, after a warm-up each. The fleet
  # bench runs it beside its fleet; BENCH=cpu alone, beside no fleet.
  class CpuComparison
    CLONE = 'benchcpu'
    # At most this ratio of medians, clone over plain host.
    TARGET = 1.05
    # At most this many CPU-s per agent run of the workload in a clone.
    CLONE_TARGET = 1.8
    AGENT_RUN = ['clone-army', 'exec', '--clone', CLONE, '--timeout', '300', '--format', 'json',
                 '--', 'puppet', 'agent', '-t', '--color=false'].freeze
    # What the runs' catalogs hold: the workload for the two measured agents, an
    # empty catalog for every other node (the fleet, the load host).
    SITE_PP = <<~PP
      node '#{CLONE}.#{BenchHost::DOMAIN}', '#{SandboxDriver.domain(BenchHost::PLAIN)}' {
        include clone_army::workload
      }
      node default {}
    PP
    # A config file set aside is renamed to its name and this.
    ASIDE = '.bench-off'

    def initialize(bench)
      @bench = bench
      @host = bench.host
      @reps = bench.settings.cpu_reps
      @cache = PuppetX::CloneArmy::Schema.fetch('fact_cache')
    end

    def run
      @bench.log("creating #{CLONE} (manual)")
      @bench.create_clone(CLONE, '--run-mode', 'manual')
      classify
      @bench.log("booting the plain sandbox host #{BenchHost::PLAIN} (no fleet) for the CPU comparison")
      @host.sandbox!('up', BenchHost::PLAIN)
      runs = measure
      @host.sandbox!('down', BenchHost::PLAIN)
      figures(runs)
    end

    private

    def classify
      site = File.join(@bench.sandbox_lib['SERVER_ENVIRONMENT'], 'manifests', 'site.pp')
      @bench.log("#{site}: clone_army::workload for #{CLONE} and #{BenchHost::PLAIN}")
      @host.run!('sh', '-ec', 'mkdir -p "${1%/*}" && printf %s "$2" > "$1.tmp" && mv "$1.tmp" "$1"', 'sh', site, SITE_PP)
    end

    def measure
      @bench.log("CPU per agent run: warm-up (certificates), then #{@reps} runs each, alternating")
      @host.run('bash', BenchHost::INSIDE, 'host-run', sandbox: BenchHost::PLAIN)
      @host.run('bash', BenchHost::INSIDE, 'host-run')
      @host.run!(*AGENT_RUN)
      runs = { uncached: [], clone: [], plain: [], host: [] }
      @reps.times do |i|
        reading = { uncached: uncached_run, clone: cached_run, plain: host_run(BenchHost::PLAIN), host: host_run(BenchHost::NAME) }
        reading.each { |side, v| runs[side] << v }
        @bench.log("run #{i + 1}: clone #{reading[:clone]} CPU-s with the fact cache, #{reading[:uncached]} without, " \
                   "plain host #{reading[:plain]} CPU-s, load host #{reading[:host]} CPU-s")
      end
      runs
    end

    # One run with Facter's config set aside (outside the measured run), so that
    # Facter resolves every fact; the config back after it.
    def uncached_run
      in_clone(config_moves(aside: true))
      clone_run
    ensure
      in_clone(config_moves(aside: false))
    end

    # One run with the cache filled by a run of Facter before it (outside the
    # measured run) and its groups' files checked there.
    def cached_run
      in_clone('facter >/dev/null 2>&1')
      in_clone(cache_check)
      clone_run
    end

    # Renames each config file there is to or from its aside name.
    def config_moves(aside:)
      @cache['config_files'].map do |conf|
        from, to = aside ? [conf, conf + ASIDE] : [conf + ASIDE, conf]
        "if [ -e #{from.shellescape} ]; then mv #{from.shellescape} #{to.shellescape}; fi"
      end.join('; ')
    end

    # True in the clone when one of the cache directories holds a file for every
    # group cached on a dpkg base (the bench's bases are Debian's).
    def cache_check
      groups = @cache['host_groups'] + @cache['package_groups']
      @cache['cache_dirs'].map do |dir|
        "( #{groups.map { |g| "[ -s #{File.join(dir, g).shellescape} ]" }.join(' && ')} )"
      end.join(' || ')
    end

    def in_clone(script)
      answer = @host.run!('clone-army', 'exec', '--clone', CLONE, '--timeout', '300', '--format', 'json', '--', 'sh', '-c', script)
      code = Readings.exec_exit(answer)
      raise BenchHost::Failed, "in #{CLONE}, `#{script}` exited #{code.inspect}" unless code&.zero?
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

    # Each side's median, labelled: [key, side, label].
    MEDIANS = [
      ['cpu_clone', :clone, 'CPU per agent run of the workload in a clone, fact cache on'],
      ['cpu_clone_uncached', :uncached, 'CPU per agent run of the workload in a clone, fact cache off'],
      ['cpu_plain', :plain, 'CPU per agent run of the workload on a plain sandbox host, no fleet'],
      ['cpu_host', :host, 'CPU per agent run on the load host, its fact listing the fleet'],
    ].freeze

    def figures(runs)
      med = runs.transform_values { |v| Stats.fixed(Stats.median(v)) }
      MEDIANS.each do |key, side, label|
        value = Float(med[side])
        judged = side == :clone ? { target: "≤ #{CLONE_TARGET}", met: @bench.met_le(value, CLONE_TARGET) } : {}
        @bench.fig(key, "#{label} (median of #{@reps})", value, unit: 'CPU-s', note: Stats.quote(runs[side]), **judged)
      end
      ratio_fig('cpu_ratio', 'CPU per run, clone / plain host', med[:clone], med[:plain], ['clone', 'plain'], target: TARGET)
      ratio_fig('cpu_cache_ratio', 'CPU per run in a clone, fact cache on / off', med[:clone], med[:uncached], ['on', 'off'])
    end

    def ratio_fig(key, label, num, den, names, target: nil)
      ratio, note = Stats.ratio(num, den, names)
      ratio = Float(Stats.fixed(ratio))
      judged = target ? { target: "≤ #{target}", met: @bench.met_le(ratio, target) } : {}
      @bench.fig(key, label, ratio, unit: '', note: "medians: #{note} CPU-s", **judged)
    end
  end
end
