# frozen_string_literal: true

require_relative 'runs'
require_relative 'stats'
require_relative 'watcher'

module CloneArmyBench
  # The large fleet's check-ins and phasing, from the runs the watcher saw.
  #
  # Check-ins: every clone must finish a successful run within one interval
  # (+ GRACE s) of the time the whole fleet runs, as its timer runs it once per
  # interval (a report PUT alone would count failed runs too). Waited for in
  # short steps until every clone has or the window is over; each step keeps the
  # count, so an interrupted run still records how far it got. Also: one puppet
  # apply to a fleet checked in, from the last step's apply to the end of the run
  # that made the last clone's first check-in since it.
  class Checkins
    GRACE = 60
    POLL = 15
    KEY = 'fleet_checkin'

    def initialize(bench)
      @bench = bench
      @s = bench.settings
      @runs = bench.record['runs']
    end

    # From the last step's apply on (apply_t0, epoch seconds): the watcher reads the runs.
    def watch_from(apply_t0)
      @apply_t0 = apply_t0
      @watcher = RunsWatcher.new(@bench.host, @runs, apply_t0).start
    end

    def stop_watching
      @watcher&.stop
    end

    # The whole fleet runs from fleet_t0: the window, kept with the raw data.
    def window_from(fleet_t0)
      @fleet_t0 = fleet_t0
      @end = Float(Stats.fixed(fleet_t0 + @s.runinterval + GRACE))
      File.write(@bench.record['times'], "#{format('%.9f', @apply_t0)} #{format('%.9f', fleet_t0)} #{Stats.fixed(@end)}\n")
      @count = [0, '0']
    end

    def count_and_figure
      loop do
        ok = Runs.checked_in(runs, @fleet_t0.floor, @end.floor)
        @count = [ok, Stats.fixed(@bench.now - @fleet_t0)]
        break if ok >= @s.clones || @bench.now > @end + 20

        sleep POLL
      end
      ok = @count[0]
      @bench.fig(KEY, label, ok,
                 unit: "of #{@s.clones}", target: "all #{@s.clones}", met: ok >= @s.clones,
                 note: "window #{@s.runinterval} s + #{GRACE} s from all running; counted #{@count[1]} s in, from the runs the watcher saw")
      apply_to_checked_in
    end

    # For the teardown: the count so far, when the run ended before the window closed.
    def partial
      return if @count.nil? || @bench.record.figure?(KEY)

      @bench.fig(KEY, label, @count[0],
                 unit: "of #{@s.clones}", target: "all #{@s.clones}",
                 note: "partial: the run ended #{@count[1]} s into the window of #{@s.runinterval} s + #{GRACE} s")
    end

    # The phasing: when the fleet's runs in the interval after the check-in window
    # started (end minus total time: the timers fire at the phases, and run times
    # vary), as the watcher saw them in the clones' summaries (the server keeps no
    # reports on every version). Waited for in short sleeps, one poll past its end.
    # Over the second interval (the first holds certificate requests); the rule
    # (the busiest stretch against twice the even share, on the counts) is Runs'.
    def phasing
      until_t = @fleet_t0 + (2 * @s.runinterval) + 20
      @bench.log("waiting until #{Time.at(until_t).strftime('%T')} for the phasing figure")
      sleep POLL while @bench.now < until_t
      stop_watching
      ph = Runs.phasing(starts, Float(Stats.fixed(@fleet_t0 + @s.runinterval)), @s.runinterval)
      @bench.fig('phasing', "phasing: share of an interval's runs in its busiest #{Runs::PHASING_WINDOW} s", ph[:share],
                 unit: '', target: "≤ #{Runs::PHASING_LIMIT} × even ideal (#{Stats.fixed(ph[:even_twice], 4)})", met: ph[:met],
                 note: "#{ph[:best]} of #{ph[:total]} runs started in the second interval; " \
                       "twice even is #{Stats.fixed(ph[:even_twice] * ph[:total], 1)}")
    end

    private

    # The distinct runs' start times, kept with the raw data ("reports") and read
    # back as kept, so that make bench-derive finds the same phasing.
    def starts
      File.write(@bench.record['reports'], Runs.starts(runs).sort.map { |c, t| "#{c} #{Stats.fixed(t)}\n" }.join)
      File.read(@bench.record['reports']).each_line.map(&:split).reject(&:empty?).map { |c, t| [c, Float(t)] }
    end

    # The runs the watcher has written so far; a line it is still writing is left
    # for the next look.
    def runs
      text = File.exist?(@runs) ? File.read(@runs) : ''
      Runs.parse(text.each_line.select { |l| l.end_with?("\n") }.join)
    end

    def label
      'large fleet: clones with a successful run within one interval of all running'
    end

    def apply_to_checked_in
      label = "large fleet: one puppet apply to all #{@s.clones} checked in (last step, ramp_up #{@s.ramp_up} s)"
      at = Runs.all_in_at(runs, @apply_t0, @s.clones)
      if at
        @bench.fig('apply_to_checked_in', label, Float(Stats.fixed(Float(Stats.fixed(at, 0)) - @apply_t0)),
                   unit: 's', note: "from the apply's start to the end of the last clone's first successful run since")
      else
        @bench.fig('apply_to_checked_in', label, nil,
                   unit: 's', note: 'not every clone had a successful run by the window\'s end')
      end
    end
  end
end
