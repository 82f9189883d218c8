# frozen_string_literal: true

require 'uri'
require_relative 'agent_defaults'
require_relative 'schema'

module PuppetX
  module CloneArmy
    # Twins of real nodes: how the class's clones are assigned the nodes `twin
    # import` took in, what each is then named, and where its node's record is.
    # One place for these rules, which the `clone_army` fact, the class's
    # functions and `clone_army_clone` read.
    module Twins
      # Where `twin import` keeps the records, one `<node>.json` each.
      DIR = Schema.fetch('twins_dir')
      # A node's certname, as the helper takes a twin's node.
      NODE = Schema.name_pattern(:twin_node)
      NODE_MAX_LENGTH = Schema.fetch('names', 'twin_node', 'max_length')
      NODE_RULE = Schema.fetch('names', 'twin_node', 'rule')

      # How the nodes are dealt to clone1 .. cloneN: `round_robin` in the
      # nodes' name order; `mix` so that every first N clones hold the roles
      # (`pp_role`) in the estate's own proportions. The first is the default.
      ASSIGNMENTS = ['round_robin', 'mix'].freeze
      # What a twin is named: `clone` (`clone<N>.<node label>.<host certname>`),
      # `node_prefix` (`<node label>-clone<N>.<host certname>`, which `node
      # /^web\d+/` still matches). The first is the default.
      CERTNAME_SCHEMES = ['clone', 'node_prefix'].freeze

      # A hostname's label is at most this long.
      LABEL_MAX_LENGTH = Schema.fetch('names', 'hostname', 'label_max_length')

      def self.validate_node(attribute, value)
        return if node?(value)

        raise ArgumentError, "#{attribute} must be #{NODE_RULE} (e.g. 'web01.example.com'); got #{value.inspect}"
      end

      def self.node?(value)
        value.is_a?(String) && value.length <= NODE_MAX_LENGTH && value.match?(NODE)
      end

      # Where `twin import` takes the nodes from: a directory, or a PuppetDB and
      # the query whose records are the nodes.
      SOURCES = [['facts_dir'], ['puppetdb', 'query'].sort].freeze
      NON_EMPTY = %r{\A.+\z}m.freeze

      def self.validate_source(value)
        settings = value.is_a?(Hash) ? value.transform_keys(&:to_s) : {}
        unless SOURCES.include?(settings.keys.sort) && settings.values.all?(NON_EMPTY)
          raise ArgumentError, "source must be { 'facts_dir' => DIR } or { 'puppetdb' => URL, 'query' => PQL }, " \
                               "each a non-empty string; got #{value.inspect}"
        end
        return if settings.fetch('facts_dir', '/').start_with?('/')

        raise ArgumentError, "source's facts_dir must be an absolute path; got #{settings['facts_dir'].inspect}"
      end

      # The files a PuppetDB source is asked with, and no other takes.
      TLS_FILES = ['ca_cert', 'client_cert', 'client_key'].freeze

      # The source of the class's `twins` (its SOURCES keys), as
      # `clone_army_twins` takes it, or why there is none: both sources or
      # neither, TLS files beside a directory, or `exports => 'isolated'` when
      # the twins' `server` is the host of the PuppetDB the nodes come from,
      # which stores their exported resources beside the real nodes'.
      def self.source_of(twins, server)
        source = one_source(twins)
        tls = TLS_FILES.select { |key| twins.key?(key) }
        if source.key?('facts_dir') && !tls.empty?
          raise ArgumentError, "twins' #{tls.join(', ')} are for `puppetdb` only; the nodes come from `facts_dir`"
        end

        validate_source(source)
        return source unless twins['exports'] == 'isolated' && own_puppetdb?(source, server)

        raise ArgumentError, "twins' exports => 'isolated' says no real node collects the twins' exported " \
                             "resources, but the twins' server #{server} is the host of the PuppetDB the nodes " \
                             'come from, which stores them beside the real nodes\' and hands them to their ' \
                             'collectors (<<| |>>); point the twins at a server with a PuppetDB of its own, ' \
                             "or say exports => 'shared'"
      end

      # The keys of the one source `twins` gives in full, or why not.
      def self.one_source(twins)
        given = SOURCES.select { |keys| keys.any? { |key| twins.key?(key) } }
        return twins.slice(*given.first) if given.size == 1 && given.first.all? { |key| twins.key?(key) }

        raise ArgumentError, 'twins takes its nodes from `facts_dir`, or from `puppetdb` with `query`: ' \
                             "give one of the two; got #{twins.keys.sort.join(', ')}"
      end
      private_class_method :one_source

      # Whether the nodes come from the PuppetDB on the twins' own server.
      def self.own_puppetdb?(source, server)
        !server.nil? && source.key?('puppetdb') && puppetdb_host(source['puppetdb']) == server.downcase
      end
      private_class_method :own_puppetdb?

      # The host of a PuppetDB address (`https://host:8081`, or a bare host),
      # lowercase; nil for what is no address.
      def self.puppetdb_host(address)
        URI.parse(address.include?('://') ? address : "https://#{address}").host&.downcase
      rescue URI::InvalidURIError
        nil
      end

      # The record `clone create --twin-file` is given for a twin of `node`.
      def self.file(node)
        validate_node('twin', node)
        File.join(DIR, "#{node}.json")
      end

      # What the `clone_army` fact says of the imported nodes (`twin list`'s
      # answer): each node's OS family, role and environment, which the class
      # assigns and checks the twins by, and where they came from.
      def self.fact(list)
        nodes = list.fetch('identities').to_h do |identity|
          [identity['node'], { 'os_family' => identity.dig('os', 'family'),
                               'role' => identity.dig('extensions', 'pp_role'),
                               'environment' => identity['environment'] }.compact]
        end
        { 'total' => nodes.size, 'nodes' => nodes, 'imported_from' => list['imported_from'] }.compact
      end

      # The nodes of clone1 .. clone<count>, in that order: the nodes of
      # `nodes` ({ node => { 'role' => ... } }) dealt by `assignment`, again
      # from the first once each has had a clone.
      def self.assign(nodes, count, assignment)
        unless ASSIGNMENTS.include?(assignment)
          raise ArgumentError, "twins: assign must be one of #{ASSIGNMENTS.join(', ')}; got #{assignment.inspect}"
        end
        return [] if nodes.empty? || count.zero?

        order = assignment == 'mix' ? mixed(nodes) : nodes.keys.sort
        Array.new(count) { |index| order[index % order.size] }
      end

      # The nodes in an order where every prefix holds the roles in the
      # proportions of the whole, as near as whole clones can: each place goes
      # to the role whose share is most behind (Sainte-Laguë's divisors: size /
      # (2 × dealt + 1); a tie to the larger role, then the name), and within a
      # role the nodes go in name order.
      def self.mixed(nodes)
        by_role = nodes.keys.sort.group_by { |node| nodes[node]['role'].to_s }
        dealt = by_role.transform_values { 0 }
        Array.new(nodes.size) do
          role, members = by_role.reject { |name, group| dealt[name] == group.size }
                                 .min_by { |name, group| [-Rational(group.size, (2 * dealt[name]) + 1), -group.size, name] }
          dealt[role] += 1
          members[dealt[role] - 1]
        end
      end
      private_class_method :mixed

      # The certname of `clone` as the twin of `node` on the load host
      # `host_certname`, by `scheme`. It holds the node's first label, so that
      # it changes whenever the clone's node does: the clone's certificate
      # holds its node's extensions for as long as it keeps its certname.
      def self.certname(clone, node, host_certname, scheme)
        label = label(node)
        case scheme
        when 'clone'
          "#{AgentDefaults.certname(clone, label)}.#{host_certname}"
        when 'node_prefix'
          room = LABEL_MAX_LENGTH - clone.length - 1
          raise ArgumentError, "twins: clone name #{clone.inspect} leaves no room for a node's label" if room < 1

          "#{label[0, room]}-#{clone}.#{host_certname}"
        else
          raise ArgumentError, "twins: certnames must be one of #{CERTNAME_SCHEMES.join(', ')}; got #{scheme.inspect}"
        end
      end

      # The node's first label as a hostname's label: what a certname allows
      # and a hostname does not ('_') becomes '-', and it is cut to a label's
      # length.
      def self.label(node)
        validate_node('twin', node)
        label = node.split('.').first.to_s.tr('_', '-')[0, LABEL_MAX_LENGTH].gsub(%r{\A-+|-+\z}, '')
        label.empty? ? 'node' : label
      end
    end
  end
end
