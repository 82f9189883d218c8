# frozen_string_literal: true

require_relative 'checkin_raw'
require_relative 'cpu_split'
require_relative 'results'
require_relative 'server_view'
require_relative 'stats'

module CloneArmyBench
  # BENCH=checkin's figures, made from its raw data alone (CheckinRaw), so that
  # `bench.rb status` (while it runs), the bench (at its end) and `make
  # bench-derive` (afterwards) make the same ones.
  #
  # A clone's first run is its first run since the apply; it is a check-in when
  # the helper judged it succeeded with its own report read, and it ended in the
  # first interval (all running + RUNINTERVAL + SPLAY + GRACE). The run due in the
  # next full interval is the clone's run that started between half an interval
  # and one and a half after its first started (its timer fires one interval after
  # that start, up to SPLAY later, and SPLAY is below half an interval); none there
  # once that window has closed is a missed run, and a failure, as is no first run
  # at all once every window has closed. The server's view is from the apply on
  # (the first runs of the clones started first come during the ramp); the CPU is
  # over the second interval, the steady state (no boots, no certificate requests).
  module CheckinFigures
    # Seconds after an interval for its last runs to end and be read.
    GRACE = 120
    # Percent of the runs due in the second interval that must succeed.
    SECOND_TARGET = 99
    KEYS = ['checkin_first_runs', 'checkin_second_interval', 'run_time_p50', 'run_time_p95', 'run_time_next_p50',
            'run_time_next_p95', 'server_view', 'server_rejections', *CpuSplit::KEYS, 'checkin_capacity'].freeze

    # What the figures are made of at one time: the runs since the apply, each
    # clone's first, the second interval's.
    View = Struct.new(:apply_t0, :fleet_t0, :runs, :firsts, :second, keyword_init: true)

    module_function

    # When the run is over at the latest: every window closed.
    def end_at(fleet_t0, scale)
      fleet_t0 + (2 * (scale.fetch('runinterval') + scale.fetch('splay', 0) + GRACE))
    end

    # The View of raw at upto (epoch seconds), or nil before all clones ran.
    def view(raw, scale, upto)
      apply_t0, fleet_t0 = CheckinRaw.times(raw.times)
      return nil unless apply_t0 && fleet_t0

      runs = CheckinRaw.runs(raw.runs).select { |r| r.ended >= apply_t0.floor && r.ended <= upto }
      first = runs.each_with_object({}) { |r, by_clone| by_clone[r.name] ||= r }
      View.new(apply_t0: apply_t0, fleet_t0: fleet_t0, runs: runs, firsts: first,
               second: second_interval(runs, first, fleet_t0, scale.fetch('runinterval'), upto))
    end

    # The figures (Results.figure hashes) of raw at upto (the run's end, or now
    # while it runs); none before all clones ran. scale: the result's scale.
    def figures(raw, scale, upto)
      v = view(raw, scale, upto)
      return [] unless v

      interval = scale.fetch('runinterval')
      measured = (v.firsts.values + v.second[:runs]).uniq
      [first_figure(v.firsts, v.fleet_t0, scale), second_figure(v.second, scale), *run_time_figures(measured),
       *run_time_figures(v.second[:runs].uniq, next_only: true),
       *ServerView.figures(CheckinRaw.timeline(raw.timeline), [v.apply_t0, upto]),
       *CpuSplit.figures(CheckinRaw.cpu(raw.cpu), v.runs, [v.fleet_t0 + interval, upto], scale)]
    end

    # Whether every clone has had its first run and its run of the next interval,
    # each final.
    def complete?(raw, scale, upto)
      v = view(raw, scale, upto)
      return false if v.nil? || v.firsts.size < scale.fetch('clones')

      v.firsts.keys.all? { |c| v.second[:runs].any? { |r| r.name == c && r.final? } }
    end

    def first_figure(first, fleet_t0, scale)
      clones = scale.fetch('clones')
      limit = fleet_t0 + scale.fetch('runinterval') + scale.fetch('splay', 0) + GRACE
      ok, failed = first.values.partition { |r| r.ok? && r.ended <= limit }
      kinds = failed.flat_map { |r| r.ok? ? ['late'] : r.failure_kinds }.tally
      Results.figure(key: 'checkin_first_runs', label: 'clones whose first run succeeded within the first interval',
                     value: ok.size, unit: "of #{clones}", target: "all #{clones}", met: ok.size == clones,
                     note: "#{first.size} of #{clones} had a first run; failed: #{tally_note(kinds)}")
    end

    # The runs in each clone's next interval, and the runs missed there up to upto.
    def second_interval(runs, first, fleet_t0, interval, upto)
      taken = []
      missed = 0
      by_clone = runs.group_by(&:name)
      first.each do |clone, run|
        from = run.started + (interval / 2.0)
        inside = by_clone[clone].select { |r| r.started >= from && r.started < from + interval }
        taken.concat(inside)
        missed += 1 if inside.empty? && from + interval + GRACE <= upto
      end
      { runs: taken, missed: missed, closed: fleet_t0 + (2 * interval) + GRACE <= upto, with_first: first.size }
    end

    def second_figure(second, scale)
      clones = scale.fetch('clones')
      ok = second[:runs].count(&:ok?)
      missed = second[:missed] + (second[:closed] ? clones - second[:with_first] : 0)
      due = second[:runs].size + missed
      kinds = second[:runs].flat_map(&:failure_kinds).tally
      kinds['missed'] = missed if missed.positive?
      Results.figure(key: 'checkin_second_interval', label: 'runs due in the next full interval that succeeded',
                     value: due.zero? ? nil : Float(Stats.fixed(ok * 100.0 / due, 2)), unit: '%',
                     target: "≥ #{SECOND_TARGET}", met: second_met(ok, due, clones),
                     note: "#{ok} of #{due} runs due so far (#{clones} clones); failed: #{tally_note(kinds)}")
    end

    # Decided on the counts; not met while a clone's run is still to come.
    def second_met(succeeded, due, clones)
      return nil if due.zero?

      due >= clones && succeeded * 100 >= SECOND_TARGET * due
    end

    # The run time's p50 and p95: of each clone's first run and its next interval's,
    # or (next_only) of the next interval's alone, the steady state without the first
    # runs' certificate requests and the boots beside them.
    def run_time_figures(measured, next_only: false)
      totals = measured.map(&:total)
      p50 = totals.empty? ? nil : Float(Stats.fixed(Stats.median(totals, min: 1)))
      p95 = Stats.p95(totals)
      key, which = next_only ? ['run_time_next', "the next interval's alone"] : ['run_time', "each clone's first and the next interval's"]
      note = "#{totals.size} runs: #{which}"
      label = next_only ? 'agent run time in the next interval' : 'agent run time'
      [Results.figure(key: "#{key}_p50", label: "#{label} (p50)", value: p50, unit: 's', target: '–',
                      met: nil, note: note),
       Results.figure(key: "#{key}_p95", label: "#{label} (p95)", value: p95 && Float(Stats.fixed(p95)),
                      unit: 's', target: '–', met: nil,
                      note: p95 ? note : "#{note}; a p95 needs #{Stats::MIN_P95_VALUES}")]
    end

    def tally_note(kinds)
      kinds.empty? ? 'none' : kinds.sort.map { |k, n| "#{k} #{n}" }.join(', ')
    end
  end
end
