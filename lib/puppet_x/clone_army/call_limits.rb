# frozen_string_literal: true

require_relative 'answer'
require_relative 'runner'
require_relative 'schema'

module PuppetX
  module CloneArmy
    # How long one call of the helper may take before it is stopped and
    # fails. The helper's schema holds the limits (`waits`) beside the
    # helper's own waits that they outlast, so that only a helper that hangs
    # meets them, and none is written down here; the longest a ramp can take
    # the helper says itself (`ramp longest`).
    module CallLimits
      WAITS = Schema.fetch('waits')
      RAMP_CALL = 'ramp run'
      # The verb that answers, from the same arguments, the longest a
      # `ramp run` can take, starting nothing.
      RAMP_LONGEST = ['ramp', 'longest'].freeze

      # The limit for the call with `args` to the helper at `helper`: its
      # verb's, and for the verb that sleeps through its `--ramp-up`, that ramp
      # on top, so that a long ramp is never stopped part-way. A `ramp run`
      # has the longest its schedule can take, or none (ramp_seconds).
      def self.seconds(args, helper: nil, waits: WAITS)
        args = args.map(&:to_s)
        verb = args.take(2).join(' ')
        return ramp_seconds(helper, args, waits: waits) if verb == RAMP_CALL

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

      # The longest the `ramp run` of `args` can take, as the helper at
      # `helper` answers it for the same arguments (docs/PROTOCOL.md, `ramp
      # longest`) within an ordinary call's limit: nil (no limit, as for
      # `exec`) when its steps are not bounded. A refusal of the arguments, or
      # an answer that is not one, is the Answer::Refused the ramp would meet;
      # a helper that hangs, the Runner::Timeout.
      def self.ramp_seconds(helper, args, waits: WAITS)
        raise ArgumentError, 'the limit of a ramp run is the helper\'s to say: name the helper' unless helper

        argv = [helper, *RAMP_LONGEST, *args.drop(2)]
        ran = Runner.run(argv, timeout: waits.fetch('call_seconds'))
        document = Answer.document(ran.stdout, ran.exitstatus, argv, ran.stderr)
        result = Answer.result(document, ran.exitstatus, argv)
        seconds = result['seconds']
        return seconds if result.key?('seconds') && (seconds.nil? || (seconds.is_a?(Integer) && seconds.positive?))

        raise Answer.malformed(argv, ran.exitstatus, "\"result\".\"seconds\" is #{Answer.excerpt(seconds.to_json)}, " \
                                                     'neither a positive whole number nor null', document)
      end
    end
  end
end
