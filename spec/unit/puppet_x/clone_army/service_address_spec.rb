# frozen_string_literal: true

require 'spec_helper'
require 'json'
require_relative '../../../../lib/puppet_x/clone_army/service_address'

# One rule for a server or PuppetDB address: the class's type alias, the
# report task's metadata (which Bolt checks) and the task's own check
# (which a task run without Bolt's check meets) say the same pattern.
describe PuppetX::CloneArmy::ServiceAddress do
  root = File.expand_path('../../../..', __dir__)

  it 'is the pattern of Clone_army::Service_address, word for word' do
    alias_text = File.read(File.join(root, 'types/service_address.pp'))[%r{^type Clone_army::Service_address = Pattern\[/(.*)/\]$}, 1]
    expect(alias_text).to eq(described_class::PATTERN_TEXT)
  end

  it 'is the pattern of the report task\'s server and puppetdb' do
    parameters = JSON.parse(File.read(File.join(root, 'tasks/report.json')))['parameters']
    ['server', 'puppetdb'].each do |key|
      expect(parameters.dig(key, 'type')).to eq("Optional[Pattern[/#{described_class::PATTERN_TEXT}/]]"), key
    end
  end

  valid = ['puppet', 'puppet.example.com', 'puppet.example.com:8141', '127.0.0.1:8140',
           'https://puppet.example.com', 'https://puppet.example.com:8140', 'https://puppetdb.example.com:8081/']
  invalid = ['', 'http://puppet:8140', 'https://', 'https://puppet:8140/status/v1/services', 'puppet:', 'puppet:123456',
             '-puppet', 'puppet example', 'puppet;reboot', "puppet\nx", 'https://user@puppet', nil, 8140]

  it 'takes a host, host:port and an https URL of a host and port' do
    valid.each { |value| expect(described_class.valid?(value)).to be(true), value.inspect }
  end

  it 'refuses anything else' do
    invalid.each { |value| expect(described_class.valid?(value)).to be(false), value.inspect }
  end

  it 'takes what the Puppet type alias takes' do
    type = Puppet::Pops::Types::TypeParser.singleton.parse("Pattern[/#{described_class::PATTERN_TEXT}/]")
    (valid + invalid).each { |value| expect(type.instance?(value)).to be(described_class.valid?(value)), value.inspect }
  end

  it 'names the forms with the default port of each service' do
    expect(described_class.forms('server')).to include('puppet.example.com', 'https://puppet.example.com:8140')
    expect(described_class.forms('puppetdb')).to include('puppetdb.example.com', 'https://puppetdb.example.com:8081')
  end
end
