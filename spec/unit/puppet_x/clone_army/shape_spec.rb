# frozen_string_literal: true

require 'spec_helper'
require_relative '../../../../lib/puppet_x/clone_army/shape'

# How a shape's facts reach the helper: as a JSON file, the rest as flags.
describe PuppetX::CloneArmy::Shape do
  let(:shape) { { run_mode: :timer, facts: { 'role' => 'web', 'rack' => 3 } } }

  describe '.facts_file_content' do
    it 'is the facts as JSON' do
      expect(JSON.parse(described_class.facts_file_content(shape))).to eq('role' => 'web', 'rack' => 3)
    end

    it 'writes no facts as an empty object' do
      expect(described_class.facts_file_content(facts: {})).to eq('{}')
    end

    it 'is nil where the shape sets no facts' do
      expect(described_class.facts_file_content(run_mode: :timer)).to be_nil
    end
  end

  describe '.for_helper' do
    it 'passes the facts as the file given' do
      expect(described_class.for_helper(shape, '/run/x/facts')).to eq(run_mode: :timer, facts_file: '/run/x/facts')
    end

    it 'leaves facts out where there is no file' do
      expect(described_class.for_helper(shape, nil)).to eq(run_mode: :timer)
    end

    it 'leaves the shape it was given as it was' do
      described_class.for_helper(shape, '/run/x/facts')
      expect(shape).to include(:facts)
    end
  end
end
