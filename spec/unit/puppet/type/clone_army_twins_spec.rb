# frozen_string_literal: true

require 'spec_helper'

describe Puppet::Type.type(:clone_army_twins) do
  def twins(attributes = {})
    described_class.new({ name: 'clone_army', source: { 'facts_dir' => '/srv/estate' } }.merge(attributes))
  end

  it 'takes a directory, or a PuppetDB and its query, as the source' do
    expect(twins[:source]).to eq('facts_dir' => '/srv/estate')
    expect(twins(source: { puppetdb: 'https://db:8081', query: 'inventory[certname] {}' })[:source])
      .to eq('puppetdb' => 'https://db:8081', 'query' => 'inventory[certname] {}')
  end

  it 'refuses a source that is neither, naming the two forms' do
    [{ 'facts_dir' => 'estate' }, { 'puppetdb' => 'db' }, { 'facts_dir' => '/a', 'puppetdb' => 'db', 'query' => 'q' }, '/srv'].each do |bad|
      expect { twins(source: bad) }.to raise_error(Puppet::ResourceError, %r{source})
    end
  end

  it 'takes the TLS files as absolute paths, the client pair together' do
    expect(twins(ca_cert: '/etc/ca.pem')[:ca_cert]).to eq('/etc/ca.pem')
    expect { twins(ca_cert: 'ca.pem') }.to raise_error(Puppet::ResourceError, %r{ca_cert must be an absolute path})
    expect { twins(client_cert: '/c.pem') }.to raise_error(Puppet::ResourceError, %r{client_cert and client_key go together})
  end

  it 'requires the helper' do
    catalog = Puppet::Resource::Catalog.new
    file = Puppet::Type.type(:file).new(path: '/usr/local/sbin/clone-army', ensure: 'file')
    resource = twins
    [file, resource].each { |r| catalog.add_resource(r) }
    expect(resource.autorequire.map { |edge| edge.source.to_s }).to eq(['File[/usr/local/sbin/clone-army]'])
  end
end
