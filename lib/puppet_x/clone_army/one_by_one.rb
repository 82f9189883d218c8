# frozen_string_literal: true

require 'puppet'

module PuppetX
  module CloneArmy
    # A helper call made for many clones at once and, when it fails, for
    # each clone on its own (starting a running clone, stopping a stopped
    # one, removing a removed one or creating a created one changes
    # nothing), so that each failure is known by the clone that failed.
    module OneByOne
      # One clone a call could not act on: the provider, what was tried
      # ('remove', 'create', 'restart' or 'start') and the Puppet::Error.
      Failure = Struct.new(:provider, :verb, :error)

      module_function

      # Yields all `providers` at once; when that fails, each on its own,
      # each `pace` seconds after the one before began (0: at once), so the
      # retries of a start with a ramp-up keep its pace and never start the
      # fleet at once. `pause` sleeps the seconds it is given. Returns the
      # Failures.
      def each(providers, verb, pace: 0, pause: ->(seconds) { sleep(seconds) })
        yield providers
        []
      rescue Puppet::Error => e
        announce_retries(providers, verb, pace, e)
        began = nil
        providers.filter_map do |provider|
          began = keep_pace(began, pace, pause)
          yield [provider]
          nil
        rescue Puppet::Error => error
          Failure.new(provider, verb, error)
        end
      end

      # A paced retry takes as long as the ramp again: a warning says why.
      def announce_retries(providers, verb, pace, error)
        names = providers.map(&:name).join(' ')
        unless pace.positive?
          Puppet.debug("clone_army: #{verb} of #{names} failed (#{error.message}); one clone at a time")
          return
        end

        Puppet.warning(format('clone_army: %<verb>s of %<names>s failed (%<message>s); trying one clone at a time, ' \
                              'one every %<pace>.1f s to keep the ramp-up', verb: verb, names: names,
                                                                            message: error.message, pace: pace))
      end

      # Pauses until `pace` seconds after `began` (a monotonic time, nil for
      # the first); returns the time the next one begins.
      def keep_pace(began, pace, pause)
        if began && pace.positive?
          left = pace - (monotonic_now - began)
          pause.call(left) if left.positive?
        end
        monotonic_now
      end

      def monotonic_now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end
    end
  end
end
