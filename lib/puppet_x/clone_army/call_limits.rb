# frozen_string_literal: true

require_relative 'schema'

module PuppetX
  module CloneArmy
    # How long one call of the helper may take before it is stopped and
    # fails. The helper's schema holds the limits (`waits`) beside the
    # helper's own waits that they outlast, so that only a helper that hangs
    # meets them, and none is written down here.
    module CallLimits
      WAITS = Schema.fetch('waits')
      # What `ramp run` holds its schedule to (the windows a step may repeat,
      # the run intervals a window holds at most by default).
      RAMP = Schema.fetch('ramp')
      RAMP_CALL = 'ramp run'
      # The flags of a `ramp run` its schedule is read from.
      RAMP_FLAGS = { max_clones: '--max-clones', step: '--step', interval: '--interval', settle: '--settle',
                     hold: '--hold', max_hold: '--max-hold', repeat: '--repeat' }.freeze

      # The limit for the call with `args`: its verb's, and for the verb that
      # sleeps through its `--ramp-up`, that ramp on top, so that a long ramp
      # is never stopped part-way. A `ramp run` has the length of its own
      # schedule (ramp_seconds), or none.
      def self.seconds(args, waits: WAITS)
        args = args.map(&:to_s)
        verb = args.take(2).join(' ')
        return ramp_seconds(args, waits: waits) if verb == RAMP_CALL

        limit = waits.fetch('long_call_seconds').fetch(verb, waits.fetch('call_seconds'))
        verb == waits.fetch('ramped_call') ? limit + ramp_up_of(args) : limit
      end

      # The seconds of the `--ramp-up` among the options of `args` (before
      # `--`, after which only names come), 0 without one.
      def self.ramp_up_of(args)
        option(args, '--ramp-up') || 0
      end

      # The longest a `ramp run` with `args` can take, from its schedule as the
      # helper keeps it (docs/PROTOCOL.md, `ramp run`): at most
      # ceil(max clones / step) coarse steps and, after the first step past a
      # bound, at most ceil(log2(step)) levels of bisection (each halves a
      # bracket no wider than a step). Each step is a step period: its settle,
      # one interval more after a step past the bounds, and its repeated
      # windows, each held at most the max hold, rounded up to whole
      # intervals. Each step may also run late by as long as one ordinary call
      # (its clones' start, a sample's requests), and the answer takes one more.
      #
      # nil (no limit, as for `exec`) when the schedule is not in `args`
      # (ramp_schedule).
      def self.ramp_seconds(args, waits: WAITS, ramp: RAMP)
        schedule = ramp_schedule(args, ramp)
        return nil unless schedule

        interval = schedule[:interval]
        windows = schedule[:max_hold] * schedule[:repeat]
        period = (schedule[:settle] + interval + windows).fdiv(interval).ceil * interval
        steps = schedule[:max_clones].fdiv(schedule[:step]).ceil + Math.log2(schedule[:step]).ceil
        call = waits.fetch('call_seconds')
        (steps * (period + call)) + call
      end

      # The figures of a ramp's schedule in `args`, the helper's defaults filled
      # in (settle and hold: the interval; the max hold: the hold, or
      # `max_hold_intervals` intervals if longer); nil when they are not all
      # there: without --max-clones the steps are as many as the clones the
      # host has, which the caller does not count; without --interval the
      # helper's default applies, which the schema does not carry; with
      # --start-at the first step waits for a wall-clock time.
      def self.ramp_schedule(args, ramp)
        given = RAMP_FLAGS.transform_values { |flag| option(args, flag) }
        return nil unless given.values_at(:max_clones, :step, :interval).all? { |n| n&.positive? } && !option?(args, '--start-at')

        interval = given[:interval]
        hold = given[:hold] || interval
        { settle: interval, max_hold: [hold, interval * ramp.fetch('max_hold_intervals')].max,
          repeat: ramp.fetch('repeat').fetch('default') }.merge(given.compact)
      end

      # Whether `flag` is among the options of `args` (before `--`).
      def self.option?(args, flag)
        args.take_while { |arg| arg != '--' }.include?(flag)
      end

      # The whole number given to `flag` among the options of `args` (before
      # `--`), nil without one.
      def self.option(args, flag)
        options = args.take_while { |arg| arg != '--' }
        index = options.index(flag)
        index ? Integer(options.fetch(index + 1), 10) : nil
      end
    end
  end
end
