# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/twins'

# @summary The node and certname of each clone of a fleet of twins.
#
# @api private
#
# Only nodes of the base's OS family are dealt: a twin's catalog evaluates only
# on a base of its node's family (its providers are the family's). The others
# are returned apart, for the class to name. They are dealt by the `twins`
# hash's `assign` (`round_robin` by default, or `mix`), and each clone is
# named by its `certnames` (`clone` by default, or `node_prefix`).
Puppet::Functions.create_function(:'clone_army::twin_assignment') do
  # @param nodes
  #   The imported nodes, as the `clone_army` fact's `twins.nodes` lists them.
  # @param clones
  #   The fleet's clones, in the order the nodes are dealt to them.
  # @param host_certname
  #   The load host's certname, e.g. `$trusted['certname']`.
  # @param os_family
  #   The base's OS family, e.g. `$facts['os']['family']`.
  # @param twins
  #   The class's `twins`, whose `assign` and `certnames` are read (see
  #   Clone_army::Twins; undef: `round_robin` and `clone`).
  # @return
  #   `twins`: `{ <clone> => { 'node' => ..., 'certname' => ... } }`;
  #   `other_family`: the nodes of another OS family, sorted.
  # @example
  #   clone_army::twin_assignment(
  #     $facts['clone_army']['twins']['nodes'], ['clone1', 'clone2'], $trusted['certname'], 'Debian',
  #     { 'facts_dir' => '/srv/estate-facts', 'exports' => 'isolated', 'assign' => 'mix' },
  #   )
  dispatch :twin_assignment do
    param 'Hash[String, Hash]', :nodes
    param 'Array[String[1]]', :clones
    param 'String[1]', :host_certname
    param 'String[1]', :os_family
    param 'Hash', :twins
    return_type 'Hash'
  end

  def twin_assignment(nodes, clones, host_certname, os_family, settings)
    twins = PuppetX::CloneArmy::Twins
    assign = settings.fetch('assign', twins::ASSIGNMENTS.first)
    certnames = settings.fetch('certnames', twins::CERTNAME_SCHEMES.first)
    matching, other = nodes.partition { |_node, seen| seen['os_family'] == os_family }.map(&:to_h)
    dealt = clones.zip(twins.assign(matching, clones.size, assign)).select { |_clone, node| node }
    assigned = dealt.to_h do |clone, node|
      [clone, { 'node' => node, 'certname' => twins.certname(clone, node, host_certname, certnames) }]
    end
    { 'twins' => assigned, 'other_family' => other.keys.sort }
  end
end
