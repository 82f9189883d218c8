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

      # Yields all `providers` at once; when that fails, each on its own.
      # Returns the Failures.
      def each(providers, verb)
        yield providers
        []
      rescue Puppet::Error => e
        Puppet.debug("clone_army: #{verb} of #{providers.map(&:name).join(' ')} failed (#{e.message}); one clone at a time")
        providers.filter_map do |provider|
          yield [provider]
          nil
        rescue Puppet::Error => error
          Failure.new(provider, verb, error)
        end
      end
    end
  end
end
