# frozen_string_literal: true

module PuppetX
  module CloneArmy
    # A Puppet Server or PuppetDB to ask, in the forms class clone_army's
    # Clone_army::Service_address takes and the helper's `--server` and
    # `--puppetdb` complete: a host name (`puppet.example.com`), `host:port`,
    # or an `https://` URL of a host and port. The helper turns a host into
    # `https://host:<the service's default port>` (its one rule for that);
    # this only holds the value to the forms it takes.
    #
    # PATTERN_TEXT is the alias's pattern, word for word, and the report
    # task's metadata says it too: spec/unit/puppet_x/clone_army/service_address_spec.rb
    # holds all three the same.
    module ServiceAddress
      PATTERN_TEXT = '\A(https:\/\/)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})(:[0-9]{1,5})?\/?\z'
      PATTERN = Regexp.new(PATTERN_TEXT)
      # Each service's port when none is given, as the helper completes it.
      DEFAULT_PORTS = { 'server' => 8140, 'puppetdb' => 8081 }.freeze

      module_function

      def valid?(value)
        value.is_a?(String) && PATTERN.match?(value)
      end

      # The forms `key` (server or puppetdb) takes, with examples, for an error message.
      def forms(key)
        host = key == 'puppetdb' ? 'puppetdb.example.com' : 'puppet.example.com'
        port = DEFAULT_PORTS.fetch(key)
        "a host name, host:port or an https:// URL of a host and port (#{host}, which means " \
          "https://#{host}:#{port}; #{host}:#{port}; https://#{host}:#{port})"
      end
    end
  end
end
