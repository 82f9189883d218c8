# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/agent_defaults'

# @summary The certname (and hostname) of a clone: `<clone>.<host certname>`.
#
# @api private
#
# Unique across load hosts, since each load host's certname is. Class
# clone_army (its private class clone_army::fleet) gives every clone this
# certname; `clone_army_clone` gives the same to a clone created without one
# (both read `PuppetX::CloneArmy::AgentDefaults`).
Puppet::Functions.create_function(:'clone_army::clone_certname') do
  # @param clone
  #   The clone's name, e.g. `clone1`.
  # @param host_certname
  #   The load host's certname, e.g. `$trusted['certname']`.
  # @return [String] The clone's certname.
  # @example
  #   clone_army::clone_certname('clone1', $trusted['certname'])  # 'clone1.loadhost.example.com'
  dispatch :clone_certname do
    param 'String[1]', :clone
    param 'String[1]', :host_certname
    return_type 'String'
  end

  def clone_certname(clone, host_certname)
    PuppetX::CloneArmy::AgentDefaults.certname(clone, host_certname)
  end
end
