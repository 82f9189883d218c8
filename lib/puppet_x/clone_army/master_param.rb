# frozen_string_literal: true

require_relative 'names'

module PuppetX
  module CloneArmy
    # `master`, the word Puppet used before `server`: both types that take a
    # server still take it, as `server` with a warning, so manifests written
    # for earlier versions keep working while they are updated. Each type
    # writes the parameter out itself (where puppet-strings reads its text);
    # this module checks it and moves it over to `server`.
    module MasterParam
      def self.validate(value)
        PuppetX::CloneArmy::Names.validate_hostname('master', value, 'puppet.example.com')
      end

      DEPRECATED = 'master is deprecated, give server instead (the same value)'

      # The server given as `server` or `master`, or nil. Calls `warn` with
      # DEPRECATED when `master` is given; raises ArgumentError when the two
      # disagree. The class (function clone_army::given_server) and the types
      # both take `master` this way.
      def self.given_server(server, master)
        return server if master.nil?

        if server && server != master
          raise ArgumentError, "server => '#{server}' and master => '#{master}' disagree; " \
                               'master is the deprecated name of server, so give server alone'
        end
        yield DEPRECATED
        master
      end

      # Called from the type's validate: moves `master` over to `server`.
      def self.take(resource)
        return if resource[:master].nil?

        resource[:server] = given_server(resource[:server], resource[:master]) { |m| resource.warning(m) }
      end
    end
  end
end
