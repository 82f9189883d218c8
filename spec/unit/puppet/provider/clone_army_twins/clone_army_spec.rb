# frozen_string_literal: true

require 'spec_helper'

describe Puppet::Type.type(:clone_army_twins).provider(:clone_army) do
  include_context 'with a helper binary'

  def twins(attributes = {})
    Puppet::Type.type(:clone_army_twins).new({ name: 'clone_army', helper: helper_path,
                                               source: { 'facts_dir' => '/srv/estate' } }.merge(attributes))
  end

  it 'reads where the imported set came from' do
    expect_helper(['twin', 'list'], 'generated/twin_list.json')
    expect(twins.provider.source).to eq('facts_dir' => '/srv/estate')
  end

  it 'is absent before any import' do
    expect_helper(['twin', 'list'], 'generated/twin_list_empty.json')
    expect(twins.provider.source).to eq(:absent)
  end

  it 'is in sync with the source it came from, and imports again from another' do
    resource = twins
    expect_helper(['twin', 'list'], 'generated/twin_list.json')
    expect(resource.property(:source).insync?(resource.provider.source)).to be(true)
    other = twins(source: { 'facts_dir' => '/srv/other' })
    expect(other.property(:source).insync?(resource.provider.source)).to be(false)
  end

  it 'imports a directory without the TLS files, which are for PuppetDB' do
    resource = twins(ca_cert: '/etc/ca.pem')
    expect_helper(['twin', 'import', '--facts-dir', '/srv/estate'], 'generated/twin_import.json')
    resource.provider.source = resource[:source]
    expect(resource.provider.source).to eq('facts_dir' => '/srv/estate')
  end

  it 'imports a PuppetDB query with the TLS files given' do
    resource = twins(source: { 'puppetdb' => 'https://db:8081', 'query' => 'inventory[certname] {}' },
                     ca_cert: '/etc/ca.pem', client_cert: '/etc/c.pem', client_key: '/etc/k.pem')
    expect_helper(['twin', 'import', '--puppetdb', 'https://db:8081', '--query', 'inventory[certname] {}',
                   '--ca-cert', '/etc/ca.pem', '--client-cert', '/etc/c.pem', '--client-key', '/etc/k.pem'],
                  'generated/twin_import.json')
    resource.provider.source = resource[:source]
  end

  it 'fails with the helper\'s refusal' do
    resource = twins
    expect_helper(['twin', 'import', '--facts-dir', '/srv/estate'], 'error_systemd.json', 1)
    refused = %r{twin import --facts-dir /srv/estate failed \[systemd\]}
    expect { resource.provider.source = resource[:source] }.to raise_error(PuppetX::CloneArmy::HelperError, refused)
  end
end
