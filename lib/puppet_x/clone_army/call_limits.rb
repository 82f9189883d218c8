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

      # The limit for the call with `args`: its verb's, and for the verb that
      # sleeps through its `--ramp-up`, that ramp on top, so that a long ramp
      # is never stopped part-way.
      def self.seconds(args, waits: WAITS)
        args = args.map(&:to_s)
        verb = args.take(2).join(' ')
        limit = waits.fetch('long_call_seconds').fetch(verb, waits.fetch('call_seconds'))
        verb == waits.fetch('ramped_call') ? limit + ramp_up_of(args) : limit
      end

      # The seconds of the `--ramp-up` among the options of `args` (before
      # `--`, after which only names come), 0 without one.
      def self.ramp_up_of(args)
        options = args.take_while { |arg| arg != '--' }
        index = options.index('--ramp-up')
        index ? Integer(options.fetch(index + 1), 10) : 0
      end
    end
  end
end
