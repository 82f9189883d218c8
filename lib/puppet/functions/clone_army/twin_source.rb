# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/twins'

# @summary Where a fleet of twins takes its nodes from, as `clone_army_twins` takes it.
#
# @api private
#
# Class clone_army checks its `twins` with it (the catalog fails when they
# give no one source) and gives the result to `clone_army_twins`'s `source`.
# The rule is `PuppetX::CloneArmy::Twins.source_of`'s, which the type's own
# check shares: one source (`facts_dir`, or `puppetdb` with `query`), TLS files
# with a PuppetDB only, and no `exports => 'isolated'` from the twins' own
# server's PuppetDB.
Puppet::Functions.create_function(:'clone_army::twin_source') do
  # @param twins
  #   The class's `twins` (Clone_army::Twins).
  # @param server
  #   The server the twins run against (undef in apply mode).
  # @return
  #   `{ 'facts_dir' => DIR }` or `{ 'puppetdb' => URL, 'query' => PQL }`.
  # @example
  #   clone_army::twin_source({ 'facts_dir' => '/srv/estate-facts', 'exports' => 'isolated' }, 'puppet-test')
  dispatch :twin_source do
    param 'Hash', :twins
    param 'Optional[String[1]]', :server
    return_type 'Hash'
  end

  def twin_source(twins, server)
    PuppetX::CloneArmy::Twins.source_of(twins, server)
  rescue ArgumentError => e
    raise Puppet::ParseError, "clone_army: #{e.message}"
  end
end
