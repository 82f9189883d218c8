# frozen_string_literal: true

module PuppetX
  module CloneArmy
    # What a clone gets when it is made without a `server` or a `certname`:
    # the server this host's own agent uses, and a certname under the host's
    # own. Class clone_army reads the same rules (through the
    # `clone_army_agent_server` fact and the `clone_army::clone_certname`
    # function), so a clone made by `puppet resource` matches the fleet's.
    module AgentDefaults
      # The name this host's agent reaches its server by: the first host of
      # `server_list` when that is set (Puppet then ignores `server`), else
      # `server`. That name is known to work from this host, where the
      # server's fqdn may not be in its certificate.
      def self.server(settings = Puppet.settings)
        first = Array(settings[:server_list]).first
        host = first.is_a?(Array) ? first.first : first
        host.nil? || host.to_s.empty? ? settings[:server] : host.to_s
      end

      # `<clone>.<host certname>`: unique across load hosts, since every
      # load host's certname is.
      def self.certname(clone, host_certname)
        "#{clone}.#{host_certname}"
      end
    end
  end
end
