# frozen_string_literal: true

require_relative 'stats'

module CloneArmyBench
  # The fleet's agent runs as the bench's watcher saw them: "<clone> <end> <succeeded>
  # <total seconds>" a line, each run as often as it was read (older results lack the
  # total).
  module Runs
    Run = Struct.new(:name, :ended, :succeeded, :total) do
      def started
        ended - total
      end
    end

    # The busiest stretch the phasing figure looks at, in seconds.
    PHASING_WINDOW = 12
    # Met when the busiest stretch holds at most this many times the even share.
    PHASING_LIMIT = 2

    module_function

    def parse(text)
      text.each_line.map(&:split).reject(&:empty?).map do |clone, ended, succeeded, total|
        Run.new(clone, Float(ended), succeeded == 'true', Float(total || 0))
      end
    end

    # Clones with a successful run that ended between from and to (inclusive).
    def checked_in(runs, from, upto)
      runs.select { |r| r.succeeded && r.ended >= from && r.ended <= upto }.map(&:name).uniq.size
    end

    # The end of the last clone's first successful run since `since`, or nil until
    # `clones` clones have one.
    def all_in_at(runs, since, clones)
      first = {}
      runs.each do |r|
        next unless r.succeeded && r.ended >= since

        first[r.name] = r.ended if first[r.name].nil? || r.ended < first[r.name]
      end
      first.size < clones ? nil : first.values.max
    end

    # The start times (end minus total time) of the distinct runs, as "<clone> <start>"
    # lines: the raw data of the phasing figure.
    def starts(runs)
      runs.uniq.map { |r| [r.name, r.started] }
    end

    # Phasing over [from, from + interval): the share of the starts in the busiest
    # PHASING_WINDOW seconds, decided on the counts (7 of 500 is over 2 x 12/1800
    # though both round to 0.014).
    def phasing(starts, from, interval)
      inside = starts.map { |_, t| t }.select { |t| t >= from && t < from + interval }
      best = Stats.busiest(inside, PHASING_WINDOW)
      total = inside.size
      {
        share: total.zero? ? nil : Float(Stats.fixed(best.to_f / total, 4)),
        best: best,
        total: total,
        met: total.positive? && best * interval <= PHASING_LIMIT * PHASING_WINDOW * total,
        even_twice: PHASING_LIMIT * PHASING_WINDOW.to_f / interval,
      }
    end
  end
end
