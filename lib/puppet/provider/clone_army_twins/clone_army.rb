# frozen_string_literal: true

require_relative '../../../puppet_x/clone_army/helper'

Puppet::Type.type(:clone_army_twins).provide(:clone_army) do
  desc <<-DOC
    Imports real nodes with the `clone-army` helper: `clone-army twin list`
    reads where the imported set came from, `clone-army twin import` replaces
    it.
  DOC

  confine kernel: 'Linux'

  # Where the imported set came from; :absent before any import.
  def source
    listing['imported_from'] || :absent
  end

  def source=(value)
    tls = { 'ca_cert' => resource[:ca_cert], 'client_cert' => resource[:client_cert],
            'client_key' => resource[:client_key] }.compact
    tls = {} unless value.key?('puppetdb')
    @listing = helper.twin_import(value.merge(tls))
    Puppet.notice("clone_army_twins[#{resource[:name]}]: imported #{@listing['identities'].size} nodes")
  end

  private

  def listing
    @listing ||= helper.twin_list
  end

  def helper
    @helper ||= PuppetX::CloneArmy::Helper.new(resource[:helper])
  end
end
