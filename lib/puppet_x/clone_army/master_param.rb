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

      # Called from the type's validate: moves `master` over to `server`.
      def self.take(resource)
        master = resource[:master]
        return if master.nil?

        server = resource[:server]
        if server && server != master
          raise ArgumentError, "server => '#{server}' and master => '#{master}' disagree; " \
                               'master is the deprecated name of server, so give server alone'
        end
        resource.warning('master is deprecated, give server instead (the same value)')
        resource[:server] = master
      end
    end
  end
end
