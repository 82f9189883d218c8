# frozen_string_literal: true

require_relative 'names'

module PuppetX
  module CloneArmy
    # `server`, the word Puppet used before `server`: both types still take
    # it, as `server` with a warning, so manifests written for earlier
    # versions keep working while they are updated.
    module MasterParam
      def self.define(type)
        type.newparam(:master) do
          desc <<-DOC
            Deprecated: the older word for `server`, taken as `server` with a
            warning. Giving both with different values is refused.
          DOC

          validate do |value|
            PuppetX::CloneArmy::Names.validate_hostname('master', value, 'puppet.example.com')
          end
        end
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
