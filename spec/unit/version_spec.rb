# frozen_string_literal: true

require 'spec_helper'
require 'json'

# The module and the helper it ships are released together under one version.
describe 'the module and helper versions' do
  root = File.expand_path('../..', __dir__)

  it 'are the same in metadata.json and helper/Cargo.toml' do
    module_version = JSON.parse(File.read(File.join(root, 'metadata.json')))['version']
    helper_version = File.read(File.join(root, 'helper/Cargo.toml'))[%r{^version = "([^"]+)"}, 1]
    expect(helper_version).to eq(module_version)
  end

  it 'name an unreleased or released section of the changelog' do
    module_version = JSON.parse(File.read(File.join(root, 'metadata.json')))['version']
    expect(File.read(File.join(root, 'CHANGELOG.md'))).to match(%r{^## #{Regexp.escape(module_version)}\b})
  end
end
