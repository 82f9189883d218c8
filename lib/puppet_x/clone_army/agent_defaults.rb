# frozen_string_literal: true

require_relative 'schema'

module PuppetX
  module CloneArmy
    # What a clone gets when it is made without a `server` or a `certname`:
    # the server this host's own agent uses (and its port), and a certname
    # under the host's own. Class clone_army reads the same rules (through the
    # `clone_army_agent_server` and `clone_army_agent_server_port` facts and
    # the `clone_army::clone_certname` function), so a clone made by `puppet
    # resource` matches the fleet's.
    module AgentDefaults
      # The name this host's agent reaches its server by: the first host of
      # `server_list` when that is set (Puppet then ignores `server`), else
      # `server`. That name is known to work from this host, where the
      # server's fqdn may not be in its certificate.
      def self.server(settings = Puppet.settings)
        host = listed(settings)&.first
        host.nil? || host.to_s.empty? ? settings[:server] : host.to_s
      end

      # The port that server answers on: the port of the first `server_list`
      # entry, else `serverport` (which Puppet also uses for an entry without
      # one). nil when it is Puppet's default, so that a clone's puppet.conf
      # only says what an agent would not assume.
      def self.server_port(settings = Puppet.settings)
        host, port = listed(settings)
        port = nil if host.nil? || host.to_s.empty?
        port = Integer(port || settings[:serverport], exception: false)
        port == Schema.default(:server_port) ? nil : port
      end

      # The first `server_list` entry as [host, port] (port nil when it has
      # none), nil when the list is empty.
      def self.listed(settings)
        first = Array(settings[:server_list]).first
        first.is_a?(String) ? first.split(':') : first
      end
      private_class_method :listed

      # `<clone>.<host certname>`: unique across load hosts, since every
      # load host's certname is.
      def self.certname(clone, host_certname)
        "#{clone}.#{host_certname}"
      end
    end
  end
end
