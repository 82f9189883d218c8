# frozen_string_literal: true

require 'json'
require_relative 'readings'
require_relative 'stats'

module CloneArmyBench
  # A batch of new clones, cloneFIRST..cloneLAST, made on the base with one
  # create-many (timer mode, phase i-1 of LAST) as the class makes new clones,
  # started with one clone start, and waited for until every one runs and its own
  # systemd has finished booting (an active unit only means nspawn launched).
  class Batch
    # Seconds per clone created and booted.
    TARGET = 0.3
    # How a batch's note says how many of its clones booted; BOOTED_READ reads it back.
    BOOTED_NOTE = '%d of %d booted'
    BOOTED_READ = %r{(\d+) of (\d+) booted}.freeze
    # Seconds the running fleet's idle CPU is read over before a batch.
    IDLE_WINDOW = 10

    Outcome = Struct.new(:clones, :secs, :note, :ok, :met, keyword_init: true)

    def initialize(bench, first, last, interval)
      @bench = bench
      @host = bench.host
      @first = first
      @last = last
      @interval = interval
      @names = (first..last).map { |i| "clone#{i}" }
    end

    # Makes, starts and boots the batch; its Outcome: seconds per clone (from the
    # making to the last booted), the note (the three parts, the CPU the sandbox's
    # systemd used making them and starting and booting them, and what its other
    # services used meanwhile), whether every one ran and booted, and whether that
    # was within TARGET.
    def run
      @idle = idle_share if @first > 1
      @bench.log("creating #{@names.size} timer-mode clones clone#{@first}..clone#{@last} on base #{@bench.base}")
      make
      running = start_all
      booted = boot
      @r.update(p3: pid1_cpu, s3: usec('system.slice'), boot_cpu: boot_cpu)
      outcome(running, booted)
    end

    private

    # The readings: t* wall times, p* the CPU the sandbox's PID 1 has used, s* its
    # system.slice's usage_usec.
    def make
      @r = { p0: pid1_cpu, s0: usec('system.slice'), t0: @bench.now }
      create
      @r.update(t1: @bench.now, p1: pid1_cpu)
      # The reading above is not the batch's: the start is timed from after it.
      @r[:t1s] = @bench.now
    end

    def start_all
      start
      @bench.wait_running(@last).tap { @r[:t2] = @bench.now }
    end

    def outcome(running, booted)
      secs = Float(Stats.fixed(((@r[:t1] - @r[:t0]) + (@r[:t3] - @r[:t1s])) / @names.size))
      ok = running >= @last && booted >= @names.size
      Outcome.new(clones: @names.size, secs: secs, ok: ok, met: ok && secs <= TARGET, note: note(booted))
    end

    def note(booted)
      r = @r
      f = ->(from, to, scale = 1) { Stats.fixed((r[to] - r[from]) / scale) }
      parts = [
        "create #{f[:t0, :t1]} s + start to active #{f[:t1s, :t2]} s + to booted (is-system-running) #{f[:t2, :t3]} s",
        format(BOOTED_NOTE, booted, @names.size),
        "the host's systemd used #{f[:p0, :p1]} CPU-s making them and #{f[:p1, :p3]} CPU-s starting and booting them",
        "the host's services (system.slice: the bus, machined, the journal) #{f[:s0, :s3, 1e6]} CPU-s",
        "a clone used #{Stats.fixed(r[:boot_cpu] / 1e6)} CPU-s booting (median)",
      ]
      parts << "before the batch the #{@first - 1} running clones used #{@idle} % of a core, idle" if @idle
      parts.join('; ')
    end

    # What the clones already running take while idle is CPU the batch's boots do not get.
    def idle_share
      a = usec('machine.slice')
      sleep IDLE_WINDOW
      Stats.fixed((usec('machine.slice') - a) / IDLE_WINDOW.to_f / 10_000)
    end

    def usec(unit)
      Readings.usec(@host.inside_sh!('unit-cpu-usec', unit), "usage_usec of #{unit}")
    end

    def pid1_cpu
      Readings.numbers(@host.inside_sh!('pid1-cpu'), "the sandbox's PID 1 CPU").first
    end

    def create
      s = @bench.settings
      @host.inside_sh!('create-fleet', @bench.base, s.server_name, BenchHost::DOMAIN, @first.to_s, @last.to_s,
                       @interval.to_s, timeout: 60 + (5 * @names.size), err: @bench.record['helper.err'])
    end

    def start
      s = @bench.settings
      answer = @host.run('clone-army', 'clone', 'start', *@names, timeout: s.start_timeout)
      File.write(@bench.record['start.json'], answer.stdout)
      File.write(@bench.record['helper.err'], answer.stderr, mode: 'a')
      return if answer.success?

      @bench.log("clone start did not report every clone active; polling up to #{s.start_timeout}s")
      message = begin
        JSON.parse(answer.stdout).dig('error', 'message')
      rescue JSON::ParserError
        nil
      end
      warn message if message
    end

    # Waits (inside.sh wait-booted) until each clone's own systemd has booted;
    # how many did.
    def boot
      s = @bench.settings
      lines = @host.run!('env', "BOOT_TIMEOUT=#{s.start_timeout}", 'bash', BenchHost::INSIDE, 'wait-booted', *@names,
                         timeout: s.start_timeout + 60)
      @r[:t3] = @bench.now
      File.write(@bench.record["booted-#{@first}"], lines)
      Readings.booted_count(lines)
    end

    # The median CPU of a clone's boot (the median, as the batch's first clone may
    # have run its agent already: phase 0).
    def boot_cpu
      Stats.median(Readings.numbers(@host.inside_sh!('cpu-usec', *@names), 'usage_usec of the clones'), min: 1)
    end
  end
end
