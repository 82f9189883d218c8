# frozen_string_literal: true

require_relative 'secrets'

module PuppetX
  module CloneArmy
    # The clone provider's end-of-run work, gathered during a Puppet run and
    # done with one helper call per kind, so that 500 clones cost four
    # helper calls (and three daemon-reloads), not 2000: a daemon-reload
    # costs more the more units systemd has, so one per clone grows a fleet
    # in O(N²).
    #
    # Lifecycle in one run, as Puppet drives the clone_army_clone provider:
    #
    # - prefetch: once, before any clone resource; one `clone list` gives
    #   every resource its provider.
    # - each resource's create, destroy or flush: what can be done at once is
    #   (`clone configure`); what should go together is queued here: a new
    #   clone to create (and start), a running clone to restart (a changed
    #   run mode, interval, certname or apply source is read only at boot), a
    #   clone to remove.
    # - the clone_army_fleet resource, which requires every clone (or, in a
    #   run without one, post_resource_eval, once after every clone
    #   resource): #run empties the batch in this order: one `clone remove` of the removals, one
    #   `clone create-many` of the new clones, one `clone stop` of the clones
    #   to restart, then one `clone start --ramp-up N` of the new and the
    #   restarted clones, N the largest ramp_up asked for. The helper spreads
    #   the starts over N seconds in waves; this side plans nothing.
    #
    # A call that fails is made again for each clone on its own (starting a
    # running clone, stopping a stopped one or removing a removed one
    # changes nothing), so each failure is known by the clone that failed.
    # The retries of a start with a ramp-up keep its pace (one clone every
    # ramp_up / N seconds) and say so: they never start the fleet at once.
    #
    # The queued providers are duck-typed: #name, #state, #helper and
    # #update_from(answered_clones, reached_state).
    class Batch
      # One clone the batch could not act on: the provider, what was tried
      # ('remove', 'create', 'restart' or 'start') and the Puppet::Error.
      Failure = Struct.new(:provider, :verb, :error)

      # [provider, ramp_up] pairs.
      attr_reader :starts, :restarts
      # Providers.
      attr_reader :creates, :removals

      # `pause` sleeps the seconds it is given (the specs pass one that only
      # records them).
      def initialize(pause: ->(seconds) { sleep(seconds) })
        @pause = pause
        @creates = []
        @starts = []
        @restarts = []
        @removals = []
      end

      # Queues a clone to be created (once) after the run.
      def create(provider)
        @creates << provider unless queued?(@creates, provider)
      end

      # Queues a clone to be started (once) after the run.
      def start(provider, ramp_up)
        @starts << [provider, ramp_up.to_i] unless queued?(@starts.map(&:first), provider)
      end

      # Queues a running clone to be stopped and started (once) after the run.
      def restart(provider, ramp_up)
        @restarts << [provider, ramp_up.to_i] unless restarting?(provider)
      end

      def restarting?(provider)
        queued?(@restarts.map(&:first), provider)
      end

      # Queues a clone to be removed (once) after the run.
      def remove(provider)
        @removals << provider unless queued?(@removals, provider)
      end

      def empty?
        @creates.empty? && @starts.empty? && @restarts.empty? && @removals.empty?
      end

      # What is queued, in words ("removed clone4; created clone2, clone3;
      # restarted clone1; started clone2, clone3 over 30 s").
      def summary
        over = ramp_up_text
        [
          ['removed', @removals, ''],
          ['created', @creates, ''],
          ['restarted', @restarts.map(&:first), over],
          ['started', @starts.map(&:first), over],
        ].reject { |_, providers, _| providers.empty? }
          .map { |verb, providers, tail| "#{verb} #{providers.map(&:name).join(', ')}#{tail}" }
          .join('; ')
      end

      # Does the queued work and empties the batch. Returns the Failures.
      def run
        failures = run_removals
        creates = @creates.dup
        restarts = @restarts.dup
        starts = @starts.dup
        @creates.clear
        @restarts.clear
        @starts.clear
        failures += create_all(creates) unless creates.empty?
        failures += stop(restarts.map(&:first)) unless restarts.empty?
        starting = startable(starts, restarts, failures)
        failures += start_all(starting) unless starting.empty?
        failures
      end

      # Removes the queued clones now (a base about to be removed needs its
      # clones gone first). Returns the Failures.
      def run_removals
        removals = @removals.dup
        @removals.clear
        return [] if removals.empty?

        each_or_one_by_one(removals, 'remove') { |batch| batch.first.helper.clone_remove(*batch.map(&:name)) }
      end

      private

      # A clone whose create failed is not there to start; one whose stop
      # failed is still running: neither is started.
      def startable(starts, restarts, failures)
        not_created = failures.select { |failure| failure.verb == 'create' }.map(&:provider)
        starts.reject { |provider, _| queued?(not_created, provider) } +
          restarts.select { |provider, _| provider.state == :stopped }
      end

      def ramp_up_text
        ramp_up = (@starts + @restarts).map(&:last).max.to_i
        ramp_up.positive? ? " over #{ramp_up} s" : ''
      end

      # (Providers of one class are all == to each other: compare identities.)
      def queued?(providers, provider)
        providers.any? { |queued| queued.equal?(provider) }
      end

      # The files every clone's create names are written at once (one private
      # directory, removed after the call), so the whole batch is one call.
      def create_all(providers)
        each_or_one_by_one(providers, 'create') do |batch|
          files = batch.map(&:create_files).reduce({}, :merge)
          Secrets.with_files(files) do |paths|
            requests = batch.to_h { |provider| [provider.name, provider.create_request(paths)] }
            created = batch.first.helper.clone_create_many(requests)
            batch.each { |provider| provider.update_from(created, :created) }
          end
        end
      end

      def stop(providers)
        each_or_one_by_one(providers, 'restart') do |batch|
          stopped = batch.first.helper.clone_stop(*batch.map(&:name))
          batch.each { |provider| provider.update_from(stopped, :stopped) }
        end
      end

      def start_all(pairs)
        ramp_up = pairs.map(&:last).max
        providers = pairs.map(&:first)
        pace = providers.size > 1 ? ramp_up.to_f / providers.size : 0
        each_or_one_by_one(providers, 'start', pace: pace) do |batch|
          # One clone on its own (a retry) has nothing to spread out; the
          # retries' pace keeps the ramp.
          started = batch.first.helper.clone_start(*batch.map(&:name), ramp_up: batch.size > 1 ? ramp_up : 0)
          batch.each { |provider| provider.update_from(started, :running) }
        end
      end

      # Yields all `providers` at once; when that fails, each on its own,
      # each `pace` seconds after the one before began (0: at once).
      def each_or_one_by_one(providers, verb, pace: 0)
        yield providers
        []
      rescue Puppet::Error => e
        announce_retries(providers, verb, pace, e)
        began = nil
        providers.filter_map do |provider|
          began = keep_pace(began, pace)
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
      def keep_pace(began, pace)
        if began && pace.positive?
          left = pace - (monotonic_now - began)
          @pause.call(left) if left.positive?
        end
        monotonic_now
      end

      def monotonic_now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end
    end
  end
end
